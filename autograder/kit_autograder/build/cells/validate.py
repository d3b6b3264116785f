import extension

validacion = extension.save_and_validate(resultado, "resultado.json")
