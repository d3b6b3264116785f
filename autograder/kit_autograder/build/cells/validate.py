import json

import extension

with open("resultado.json", "w", encoding="utf-8") as f:
    json.dump(resultado, f, ensure_ascii=False, indent=2, sort_keys=True)
validacion = extension.run_in_notebook("resultado.json")
