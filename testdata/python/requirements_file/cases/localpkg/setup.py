from setuptools import setup
setup(name="localpkg")
