
FROM us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-14.py310:latest
# The directory is created by root. This sets permissions so that any user can
# access the folder.
RUN mkdir -m 777 -p /usr/app /home
WORKDIR /usr/app
ENV HOME=/home

# Keeps Python from generating .pyc files in the container
ENV PYTHONDONTWRITEBYTECODE=1
RUN rm -rf /var/sitecustomize
# Copy the source directory into the docker container.
COPY [".", "."]


ENTRYPOINT ["python3", "task.py"]