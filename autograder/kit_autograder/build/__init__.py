"""Build time: a lesson's text master -> the Otter master, the student notebooks, the zip."""
