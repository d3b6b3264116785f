# Prepara grader.check(...) y la entrega, y te dice qué cuaderno ha encontrado: lo encuentra aunque el navegador
# le haya cambiado el nombre.
try:
    from notebook_grader import Grader
except ModuleNotFoundError as falta:
    raise ModuleNotFoundError(f"Falta «{falta.name}». Abre el cuaderno dentro de la carpeta de la clase, junto a "
                              "notebook_grader.py, e instala requirements.txt (mira «Antes de empezar»).") from None
grader = Grader(assignment="$assignment")
