# Prepara grader.check(...) y la entrega. Encuentra este cuaderno aunque el navegador le haya cambiado el nombre.
try:
    from notebook_grader import Grader
except ModuleNotFoundError as falta:
    raise ModuleNotFoundError(f"Falta «{falta.name}». Abre el cuaderno dentro de la carpeta de la clase, junto a "
                              "notebook_grader.py, e instala requirements.txt (mira «Antes de empezar»).") from None
grader = Grader(assignment="$assignment")
