import lab

SEED = $seed
resultado_lab = lab.run_in_notebook(SEED)
