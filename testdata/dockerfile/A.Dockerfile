
FROM python:3.10
# The directory is created by root. This sets permissions so that any user can
# access the folder.
RUN mkdir -m 777 -p /usr/app /home
WORKDIR /usr/app
ENV HOME=/home

# Keeps Python from generating .pyc files in the container
ENV PYTHONDONTWRITEBYTECODE=1

# Copy the source directory into the docker container.
COPY ["trainer", "trainer"]


ENTRYPOINT ["python", "trainer/task.py"]