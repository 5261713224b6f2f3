
FROM python:3.10
# The directory is created by root. This sets permissions so that any user can
# access the folder.
RUN mkdir -m 777 -p /usr/app /home
WORKDIR /usr/app
ENV HOME=/home

# Keeps Python from generating .pyc files in the container
ENV PYTHONDONTWRITEBYTECODE=1

        # Found setup.py file, thus copy it to the docker container.
COPY ["./setup.py", "./setup.py"]

        RUN pip install --no-cache-dir .

        # Found requirements.txt file, thus to the docker container.
COPY ["./requirements.txt", "./requirements.txt"]

        RUN pip install --no-cache-dir -r ./requirements.txt

COPY ["dep/foo.tar.gz", "foo.tar.gz"]

RUN pip install --no-cache-dir foo.tar.gz

COPY ["bar.whl", "bar.whl"]

RUN pip install --no-cache-dir bar.whl

RUN pip install --no-cache-dir --upgrade pandas==1.2.0

RUN pip install --no-cache-dir --upgrade 'scipy>=1.3.0'

COPY ["dataset", "dataset"]


COPY ["config", "config"]


# Copy the source directory into the docker container.
COPY ["trainer", "trainer"]


ENTRYPOINT ["python", "-m", "trainer.task"]