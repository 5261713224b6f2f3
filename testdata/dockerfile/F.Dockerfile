
FROM python:3.10
# The directory is created by root. This sets permissions so that any user can
# access the folder.
RUN mkdir -m 777 -p /usr/app /home
WORKDIR /usr/app
ENV HOME=/home

# Keeps Python from generating .pyc files in the container
ENV PYTHONDONTWRITEBYTECODE=1

COPY ["dep/foo.tar.gz", "foo.tar.gz"]

RUN pip install --no-cache-dir foo.tar.gz

RUN pip install --no-cache-dir --upgrade 'numpy>=1,<2'

RUN pip install --no-cache-dir --upgrade ' pandas==1.2.0'

COPY ["config", "config"]


# Copy the source directory into the docker container.
COPY ["trainer", "trainer"]


ENTRYPOINT ["python", "trainer/task.py"]