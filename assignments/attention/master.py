# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [raw]
# # ASSIGNMENT CONFIG
# name: 055-atencion-transformer
# requirements: requirements.txt
# python_version: "3.11"
# # Otter's own first and last cells are English, name the file (a renamed download breaks
# # them) and re-run the notebook in a second kernel on export; the master has its own,
# # through notebook_grader.Grader.
# init_cell: false
# export_cell: false
# tests:
#   ok_format: false
#   files: false
# generate:
#   pdf: false
#   show_stdout: false
#   # Each question's box, hidden cases included, shows once grades are published.
#   show_hidden: true
#   # No "Public Tests" box: it says "All test cases passed!" when only public tests pass (Otter #138).
#   force_public_test_summary: false
# plugins:
#   # Grades the notebook in the kit's sandbox and replaces the kernel's verdicts; `make assign`
#   # fills in its settings (the lesson, the hidden inputs' salt, the points graded by hand).
#   - kit_autograder.otter_plugin.VerificationPlugin

# %% [markdown]
# # 055 — La atención y el Transformer, desde cero
#
# Antes de 2017, los modelos de lenguaje leían el texto palabra a palabra con redes recurrentes (RNN), arrastrando una memoria de una palabra a la siguiente. Ese enfoque chocó con un muro en los textos largos, y el artículo *Attention Is All You Need* lo sustituyó por el Transformer, cuya pieza central es la atención: cada token puede mirar directamente a todos los demás y decidir cuánto importa cada uno. Este cuaderno lo recorre pieza a pieza con NumPy, en nueve pasos:
#
# 1. Importar las bibliotecas.
# 2. El muro de las redes recurrentes: recuerdos que se desvanecen.
# 3. La atención por producto escalar con escala, paso a paso.
# 4. Por qué dividir por $\sqrt{d_k}$.
# 5. La autoatención sobre una frase, y la máscara causal.
# 6. La atención multicabeza.
# 7. La codificación posicional con senos y cosenos.
# 8. Un bloque Transformer completo.
# 9. Un Transformer entrenado: qué aprende cada cabeza.
#
# **Nivel:** intermedio-avanzado · **Horas estimadas:** 8, repartidas así: 2 para leer los nueve pasos y ejecutar sus demostraciones, 2,5 para las cuatro funciones, 1 para los cinco ejercicios sin nota, 1 para el laboratorio, la ablación y el reto, y 1,5 para las nueve preguntas.
#
# > Las citas que empiezan por **Nota del kit** son del kit de esta clase: corrigen errores frecuentes al contar este tema o amplían lo que se cuenta.

# %% [markdown] tags=["solution-note"]
# > **Solución de referencia explicada.** Este cuaderno es el de los estudiantes con la solución de cada ejercicio y, después de cada una, una explicación de por qué es así y de los errores que el corrector reconoce. Es para el profesorado: publícalo **después** de la fecha de entrega. Las respuestas de las preguntas escritas son un modelo, no la única respuesta válida: se corrigen con la rúbrica por niveles.

# %% [markdown] tags=["tour-only"]
# **Recorrido guiado.** Este cuaderno resume la materia de la clase: el texto de los nueve pasos, las fórmulas, el diagrama del bloque y todas las demostraciones, cada una con lo que imprime y dibuja. Los ejercicios, las pruebas, las preguntas, el laboratorio y el reto están en `notebook_student.ipynb`, en esta misma carpeta.
#
# Cuatro funciones, `attention`, `multihead`, `positional_encoding` y `transformer_block`, se implementan en ese cuaderno y no están en este. Las demostraciones que las necesitan aparecen aquí como texto: su código y, debajo, lo que imprimen y dibujan, calculado al preparar la clase con la solución de referencia. Las demás son celdas de código que puedes ejecutar. Para hacerlo, en una terminal abierta en esta carpeta, crea un entorno virtual, actívalo, instala los paquetes y abre el cuaderno. En Linux y macOS:
#
# ```
# python3 -m venv .venv
# source .venv/bin/activate
# python -m pip install -r requirements.txt
# jupyter lab notebook.ipynb
# ```
#
# En Windows, los dos primeros son `py -m venv .venv` y `.venv\Scripts\activate`.

# %% [markdown] tags=["graded-only"]
# **Qué tienes que hacer.** Implementa cuatro funciones: `attention` (paso 3), `multihead` (paso 6), `positional_encoding` (paso 7) y `transformer_block` (paso 8). Cada una vive sola en su celda y empieza lanzando `NotImplementedError`: sustituye esa línea por tu código, **sin cambiar el nombre, los parámetros ni lo que devuelve**. `softmax`, `layer_norm` e `init_multihead` ya vienen hechas. El paso 9 ejecuta tus funciones con los pesos de un Transformer ya entrenado. Después, «Más allá de los nueve pasos» trae cinco ejercicios cortos sin nota, cada uno con su comprobación, y luego vienen el laboratorio, nueve preguntas, el reto verificable y la entrega.
#
# **Cómo se evalúa.** Después de cada función hay una celda `grader.check(...)` con pruebas públicas: comprueban propiedades (formas, filas que suman 1, la máscara causal, el ejemplo resuelto del paso 3, la base 10000 de la codificación posicional, el modelo entrenado del paso 9), no la respuesta. Al entregar, unas pruebas ocultas comparan cada función con una solución de referencia sobre entradas que no ves, y cada función se evalúa por separado: un error en `attention` no te quita puntos en `multihead`. Que pasen las pruebas públicas **no** garantiza que pasen las ocultas.
#
# **Lo que dan por hecho las pruebas ocultas**, para que nada te pille por sorpresa:
#
# - Tu cuaderno se ejecuta **entero, de arriba abajo**, en otra máquina, como con *Kernel → Restart Kernel and Run All Cells…* en JupyterLab y Notebook 7 (en VS Code, los botones *Restart* y después *Run All*), y después se llama a tus funciones. Todo lo que usen tiene que estar definido en el cuaderno: un valor que solo existe en tu sesión de Jupyter no existirá allí.
# - Las entradas son arrays de NumPy de tipo `float64` (las máscaras, booleanas: `True` significa «puede atender»), y cada entrega recibe **sus propios** números, sacados al azar con las formas de cada caso. Puedes calcular en `float64` o en `float32`: se compara con una tolerancia pequeña.
# - Hay casos con **un solo token o una sola consulta** ($n = 1$), con $n \neq m$, y sin máscara (`mask=None`).

# %% [markdown] tags=["graded-only"]
# ## Antes de empezar
#
# 1. **Trabaja dentro de la carpeta de la clase, sin separar sus archivos.** Este cuaderno usa los que vienen con él:
#    - `notebook_grader.py` y `notebook_code.py`: las comprobaciones (`grader.check`) y la entrega;
#    - `modelo_entrenado.npz`: los parámetros del Transformer entrenado del paso 9;
#    - `lab.py`, `lab_runner.py`, `extension.py` y `extension_schema.json`: el laboratorio y el validador del reto;
#    - `tests/`: las pruebas públicas, también como archivos;
#    - `requirements.txt` y `assessment.md`: los paquetes que hay que instalar y la guía de la evaluación.
#
#    - `ablacion.py`: el laboratorio de ablación, que entrena el modelo diminuto sin cada pieza (sección «Ablación»).
#
#    `notebook.ipynb` es el recorrido guiado de la clase, sin ejercicios, y `explorer.html` el explorador interactivo. **El explorador se abre en el navegador, no en JupyterLab:** si pulsas su enlace dentro de JupyterLab, lo muestra sin sus programas y la página sale en blanco. Ábrelo con doble clic en `explorer.html` desde la carpeta de tu ordenador, o, en el explorador de archivos de JupyterLab, con clic derecho sobre `explorer.html` → *Open in New Browser Tab* («Abrir en una pestaña nueva del navegador»). No necesita conexión.
# 2. **Crea un entorno virtual e instala los paquetes**, con Python 3.11 o más reciente. En una terminal abierta en la carpeta, crea el entorno y actívalo. En Linux y macOS:
#
#    ```
#    python3 -m venv .venv
#    source .venv/bin/activate
#    ```
#
#    En Windows (en PowerShell, el segundo es `.venv\Scripts\Activate.ps1`):
#
#    ```
#    py -m venv .venv
#    .venv\Scripts\activate
#    ```
#
#    El nombre del entorno, `(.venv)`, aparece entonces al principio de la línea. Después, con el entorno activado:
#
#    ```
#    python -m pip install -r requirements.txt
#    ```
#
#    El entorno virtual no es opcional en Debian ni en Ubuntu: su Python del sistema no deja instalar paquetes con pip (`externally-managed-environment`); si `python3 -m venv` pide el paquete `python3-venv`, instálalo con el gestor de paquetes del sistema. Además, el entorno evita mezclar estos paquetes con los de otras asignaturas. Si cierras la terminal, vuelve a activarlo antes de abrir el cuaderno.
# 3. **Abre el cuaderno con ese mismo Python.** En la misma terminal, con el entorno activado:
#
#    ```
#    jupyter lab notebook_student.ipynb
#    ```
#
#    `requirements.txt` instala JupyterLab, que abre el cuaderno en tu navegador. Si prefieres **VS Code** (con sus extensiones Python y Jupyter): abre esta carpeta con *File → Open Folder…*, abre `notebook_student.ipynb`, pulsa *Select Kernel* (arriba a la derecha), elige *Python Environments…* y, en la lista, el Python de `.venv`, con el que instalaste los paquetes. Si prefieres **Notebook 7**, que `requirements.txt` no instala: `python -m pip install notebook` en el mismo entorno, y después `jupyter notebook notebook_student.ipynb`. Si falta algún paquete, la primera celda te dice cuál.
# 4. **Da igual cómo se llame el archivo.** Si el navegador lo guardó como `notebook_student (1).ipynb`, la primera celda lo encuentra igual. Solo necesita que en la carpeta no haya **dos copias** de este cuaderno: si las hay, deja la tuya y mueve la otra.
# 5. **Ejecuta la celda siguiente antes que ninguna otra.** Te dice qué cuaderno ha encontrado y cuántas funciones te quedan por implementar.

# %% deletable=false editable=false tags=["graded-only"]
# <kit: init>

# %% [markdown]
# ## Propósito
#
# Comprender la atención y la arquitectura Transformer dentro de la evolución de la inteligencia artificial, implementar un experimento mínimo verificable y distinguir qué parte constituye evidencia frente a una afirmación todavía no comprobada.
#
# ## Resultados de aprendizaje
#
# Al terminar podrás:
#
# 1. **Explicar** la atención y la arquitectura Transformer con los conceptos de autoatención (*self-attention*), atención multicabeza (*multi-head*), codificación posicional (*positional encoding*) y bloque Transformer: pasos 3 a 9 y preguntas 1 y 2.
# 2. **Ejecutar el laboratorio** con una semilla explícita y revisar su contrato JSON: «Laboratorio» y pregunta 3.
# 3. **Identificar** al menos un supuesto, una limitación y un riesgo de aplicación: el reto verificable.
# 4. **Comparar** el enfoque con la etapa anterior de la ruta, las redes recurrentes de la clase 054: paso 2.
# 5. **Producir** una evidencia reproducible y una conclusión que no exceda los datos: el reto y la pregunta 4.
#
# ## Ubicación en el mapa de la IA
#
# *Attention Is All You Need* (Vaswani et al., 2017) eliminó la recurrencia de la clase 054: en lugar de comprimir toda la historia en un estado, cada token consulta directamente a todos los demás. El Transformer resolvió a la vez las dependencias largas y la paralelización del entrenamiento, y es la arquitectura de BERT, de GPT y de los grandes modelos de lenguaje actuales, de la visión por computador (ViT) y de la predicción de estructuras de proteínas (AlphaFold). El paso 2 mide el muro que dejó atrás; los pasos 3 a 8 construyen la pieza que lo sustituyó, y el paso 9 la ve entrenada.

# %% [markdown]
# ## Paso 1: Importar las bibliotecas

# %%
import numpy as np
import matplotlib.pyplot as plt

np.set_printoptions(precision=3, suppress=True)
rng = np.random.default_rng(0)

# %% [markdown]
# Todas las celdas de demostración sacan sus números aleatorios de este único `rng`, siempre en el mismo orden, así que verás exactamente los números que cita el texto. Si ejecutas una celda dos veces, el orden se rompe: para volver a ellos, reinicia y ejecútalo todo, con *Kernel → Restart Kernel and Run All Cells…* en JupyterLab y Notebook 7, o con los botones *Restart* y después *Run All* en VS Code.

# %% [markdown]
# ## Paso 2: El muro de las redes recurrentes
#
# Una RNN actualiza un estado oculto con cada token nuevo, $h_t = \tanh(W h_{t-1} + U x_t)$, así que la información del principio de la secuencia tiene que sobrevivir a todos los pasos posteriores. Durante el entrenamiento, el gradiente que indica a la red cómo afectó el principio al resultado es un producto de una matriz jacobiana por paso, $\operatorname{diag}(1 - h_t^2)\,W$. Si esos factores encogen los vectores, el producto se encoge exponencialmente: el **desvanecimiento del gradiente**, el mismo que en una red de muchas capas, ahora a lo largo de la secuencia. Si los agrandan, el producto crece exponencialmente: la **explosión del gradiente**, que en la práctica se frena recortando el gradiente. Con ninguno de los dos se aprenden bien dependencias largas. Medimos cuánto depende todavía el estado final $h_T$ del estado inicial $h_0$ para secuencias cada vez más largas:

# %%
d_hidden = 16
W = rng.normal(0, 0.9 / np.sqrt(d_hidden), (d_hidden, d_hidden))     # parámetros recurrentes
U = rng.normal(0, 1 / np.sqrt(d_hidden), (d_hidden, d_hidden))       # parámetros de entrada
inputs = rng.normal(0, 1, (60, d_hidden))                            # una secuencia de 60 vectores de tokens

h, jacobian, influence = np.zeros(d_hidden), np.eye(d_hidden), []
for t in range(60):
    h = np.tanh(W @ h + U @ inputs[t])
    jacobian = (np.diag(1 - h ** 2) @ W) @ jacobian                   # d h_t / d h_0, por la regla de la cadena
    influence.append(np.linalg.norm(jacobian))

for T in [1, 5, 10, 20, 40, 60]:
    print(f"Tras {T:>2} {'token, ' if T == 1 else 'tokens,'} tamaño de d h_T / d h_0: {influence[T - 1]:.2e}")

# %% [markdown]
# Tras un paso, la sensibilidad de $h_T$ a $h_0$ es del orden de 1; tras 20 tokens ha caído a $2{,}2 \times 10^{-4}$, y tras 60 tokens a $1{,}6 \times 10^{-13}$, en la práctica cero. Con estos parámetros, la red apenas puede aprender que una palabra del final de un texto largo depende de otra del principio.
#
# ¿Qué encoge el producto? No $W$ sola: su radio espectral (el mayor módulo de sus valores propios) es 1,09, así que, sin la tanh, $W^{60}$ tendría norma 240 y el producto crecería. Lo que lo encoge es la derivada de tanh, $1 - h_t^2$, que nunca pasa de 1 y aquí vale de media 0,53: en cada paso, el factor $\operatorname{diag}(1 - h_t^2)$ reduce a la mitad, más o menos, lo que $W$ agranda. Las LSTM y las GRU se desarrollaron para suavizar este problema, pero siguen leyendo un token cada vez, lo que además las hace lentas de entrenar.
#
# > **Nota del kit (errata).** Este experimento se suele describir como «la influencia del primer token». Lo que mide el código es $\partial h_T / \partial h_0$, la sensibilidad al **estado inicial**, que no es un token. La influencia del primer token, $\partial h_T / \partial x_1 = \operatorname{diag}(1 - h_T^2)\,W \cdots \operatorname{diag}(1 - h_2^2)\,W\,\operatorname{diag}(1 - h_1^2)\,U$ (el factor del paso más reciente, a la izquierda, como en la celda: `jacobian = (np.diag(1 - h ** 2) @ W) @ jacobian`), es el mismo producto de jacobianos con un factor menos, así que se desvanece igual de rápido: la conclusión se mantiene, pero la magnitud medida es otra.

# %% [markdown]
# ## Paso 3: La atención por producto escalar con escala
#
# La atención toma tres matrices construidas a partir de los tokens: las consultas $Q$ (*queries*, lo que busca cada token), las claves $K$ (*keys*, lo que ofrece cada token para ser encontrado) y los valores $V$ (*values*, la información que transmite cada token):
#
# $$\text{Attention}(Q, K, V) = \text{softmax}\left(\frac{QK^\top}{\sqrt{d_k}}\right)V$$
#
# Es un **diccionario derivable de búsqueda difusa**. Un diccionario de Python devuelve el valor de la única clave que coincide exactamente con la consulta; la atención compara la consulta con **todas** las claves y devuelve una mezcla de **todos** los valores, ponderada por el parecido de cada clave con la consulta. Como los pesos salen de una softmax, todo es derivable y se puede entrenar, y cualquier par de posiciones queda conectado a distancia 1, por lejos que estén en la secuencia.
#
# Sigamos la intuición con vectores pequeños diseñados a mano. Cada token tiene 4 características: cardiaco, localización corporal, persona y palabra funcional. De momento, las consultas, las claves y los valores son los propios vectores.
#
# > **Para verlo en marcha:** la sección 1 del [explorador interactivo](explorer.html#qkv) (`explorer.html`, en tu carpeta; ábrelo en el navegador, no en JupyterLab: lo explica «Antes de empezar») calcula $Q$, $K$, $V$, las puntuaciones, la softmax y la salida con matrices que puedes editar, con y sin máscara causal.

# %%
tokens = ['el', 'paciente', 'tiene', 'pecho', 'dolor', 'brazo']
#                  cardiaco localización persona funcional
X_toy = 2 * np.array([[0.0,    0.0,      0.0,    1.0],    # el
                      [0.1,    0.0,      1.0,    0.0],    # paciente
                      [0.0,    0.0,      0.2,    0.8],    # tiene
                      [0.9,    0.8,      0.0,    0.0],    # pecho
                      [1.0,    0.3,      0.0,    0.0],    # dolor
                      [0.5,    0.9,      0.0,    0.0]])   # brazo

# %% [markdown]
# La softmax convierte puntuaciones en pesos que suman 1. Restar el máximo de cada fila no cambia el resultado (se cancela al dividir), pero evita que `np.exp` desborde con puntuaciones grandes. Ya viene hecha:

# %%
# <reference: softmax>

# %% [markdown]
# **Ejemplo resuelto.** Dos tokens con $d_k = 2$, cuyas proyecciones ya dieron
#
# $$Q = K = \begin{pmatrix}1 & 0\\ 0 & 1\end{pmatrix} \qquad V = \begin{pmatrix}1 & 2\\ 3 & 4\end{pmatrix}$$
#
# 1. **Puntuaciones.** $QK^\top$ es la identidad, y escalada, $QK^\top / \sqrt{2} = \begin{pmatrix}0{,}7071 & 0\\ 0 & 0{,}7071\end{pmatrix}$.
# 2. **Softmax por filas.** En la fila 1, $e^{0{,}7071} = 2{,}0281$ y $e^{0} = 1$, que suman $3{,}0281$: los pesos son $2{,}0281 / 3{,}0281 = 0{,}6698$ y $1 / 3{,}0281 = 0{,}3302$. La fila 2 es la misma al revés:
#
#    $$A = \begin{pmatrix}0{,}6698 & 0{,}3302\\ 0{,}3302 & 0{,}6698\end{pmatrix}$$
# 3. **Salida $AV$.** Con los pesos sin redondear, $0{,}669762$ y $0{,}330238$, la fila 1 es $0{,}669762 \cdot (1, 2) + 0{,}330238 \cdot (3, 4) = (1{,}6605;\ 2{,}6605)$, y la fila 2, $0{,}330238 \cdot (1, 2) + 0{,}669762 \cdot (3, 4) = (2{,}3395;\ 3{,}3395)$.
#
# Cada token termina siendo una mezcla de todos los valores, dominada por el valor del token cuya clave se parece más a su consulta. Con máscara causal, la fila 1 solo vería el token 1: su salida sería exactamente $(1, 2)$.
#
# > **Nota del kit.** Si multiplicas a mano los pesos ya redondeados a 4 decimales, sale $(1{,}6604;\ 2{,}6604)$ y $(2{,}3396;\ 3{,}3396)$: los pesos redondeados son $0{,}6698$ y $0{,}3302$. Sin redondear por el camino, la salida es la de aquí.

# %% [raw]
# # BEGIN QUESTION
# name: attention

# %% [markdown]
# **Ejercicio 1: `attention`.** Implementa la atención por producto escalar con escala:
#
# 1. las puntuaciones $QK^\top / \sqrt{d_k}$, donde $d_k$ es el número de columnas de $K$;
# 2. si hay máscara, las posiciones donde `mask` es `False` reciben $-\infty$ **antes** de la softmax, para que su peso sea exactamente 0;
# 3. la softmax **por filas** (cada consulta reparte su atención entre las claves);
# 4. la salida, media ponderada de los valores.
#
# Devuelve la tupla `(salida, pesos)`. `Q` tiene forma $(n, d_k)$, `K` $(m, d_k)$ y `V` $(m, d_v)$: no supongas que $n = m$ ni que $d_k = d_v$.

# %%
def attention(Q, K, V, mask=None):
    """Atención por producto escalar con escala.

    Q: (n, d_k), K: (m, d_k), V: (m, d_v). mask: matriz booleana (n, m) o None;
    True significa «puede atender».
    Devuelve (salida, pesos): salida de forma (n, d_v) y pesos de forma (n, m).
    """
    raise NotImplementedError("Implementa attention: sustituye esta línea por tu código (paso 3).")


# %% [markdown] tags=["solution-note"]
# > **Por qué así.** Cuatro líneas, una por punto del enunciado:
# >
# > 1. `d_k = K.shape[-1]`: la dimensión que se divide es la de las **claves** (y las consultas). Tomarla de `V` falla en cuanto $d_v \ne d_k$, uno de los casos ocultos.
# > 2. `Q @ K.T / np.sqrt(d_k)` da una fila por consulta y una columna por clave, $(n, m)$: no hace falta que $n = m$.
# > 3. La máscara pone $-\infty$ **antes** de la softmax (`np.where(mask, scores, -np.inf)`). Poner 0 en las puntuaciones no anula el peso ($e^0 = 1$), y poner 0 en los pesos **después** deja filas que ya no suman 1.
# > 4. La softmax va **por filas** (`axis=-1`): cada consulta reparte su atención entre las claves. Con `axis=0` las columnas suman 1 y la prueba pública de las filas falla. La `softmax` dada resta el máximo de cada fila, y por eso el caso oculto de puntuaciones de magnitud 1000 no produce `NaN`; una softmax escrita sin esa resta sí.
# >
# > La salida, `weights @ V`, es la media ponderada de los valores. Devolver solo la salida, o `(pesos, salida)` en otro orden, rompe la tupla que esperan `multihead` y las pruebas.


# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
points: 0
failure_message: "Repasa el ejemplo trabajado del paso 3: Q = K = I, V = [[1, 2], [3, 4]]."
""" # END TEST CONFIG
def test_attention_reproduce_el_ejemplo_trabajado(attention):
    import numpy as np
    Q = K = np.eye(2)
    V = np.array([[1.0, 2.0], [3.0, 4.0]])
    result = attention(Q, K, V)
    assert isinstance(result, (tuple, list)) and len(result) == 2, "attention debe devolver la tupla (salida, pesos)"
    output, weights = result
    assert np.allclose(weights, [[0.6698, 0.3302], [0.3302, 0.6698]], atol=1e-4), \
        f"Los pesos deberían ser [[0.6698, 0.3302], [0.3302, 0.6698]] y son {np.round(weights, 4).tolist()}"
    assert np.allclose(output, [[1.6605, 2.6605], [2.3395, 3.3395]], atol=1e-4), \
        f"La salida debería ser [[1.6605, 2.6605], [2.3395, 3.3395]] y es {np.round(output, 4).tolist()}"

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_attention_da_formas_correctas_y_filas_que_suman_1(attention):
    import numpy as np
    rng = np.random.default_rng(123)
    Q, K, V = rng.normal(size=(3, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    output, weights = attention(Q, K, V)
    assert np.shape(weights) == (3, 5), f"Con 3 consultas y 5 claves los pesos deben tener forma (3, 5), no {np.shape(weights)}"
    assert np.shape(output) == (3, 2), f"Con 3 consultas y valores de dimensión 2 la salida debe tener forma (3, 2), no {np.shape(output)}"
    sums = np.sum(weights, axis=1)
    # The question asked is the one the weights point to, not always the axis.
    assert np.allclose(sums, 1), (
        "Cada fila de pesos debe sumar 1, y las tuyas suman casi 1, pero no exactamente: "
        "¿redondeas o recortas los pesos antes de devolverlos?" if np.allclose(sums, 1, atol=1e-3)
        else "Cada fila de pesos debe sumar 1, y son tus columnas las que suman 1: ¿aplicas la "
        "softmax por columnas (axis=0) en lugar de por filas (axis=-1)?"
        if np.allclose(np.sum(weights, axis=0), 1)
        else "Cada fila de pesos debe sumar 1: ¿divides la exponencial de cada puntuación por "
        "la suma de las de su fila (axis=-1, keepdims=True)?")

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_attention_con_mascara_causal_no_da_peso_al_futuro(attention):
    import numpy as np
    Q = K = np.eye(2)
    V = np.array([[1.0, 2.0], [3.0, 4.0]])
    causal = np.tril(np.ones((2, 2), dtype=bool))
    output, weights = attention(Q, K, V, mask=causal)
    assert np.allclose(weights[~causal], 0), "Con la máscara causal, el peso sobre los tokens futuros debe ser 0"
    assert np.allclose(output[0], [1.0, 2.0]), \
        f"Con máscara causal, la primera fila solo ve el primer token: su salida debe ser exactamente (1, 2), no {np.round(output[0], 4).tolist()}"

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# Miramos a qué atiende el token «dolor»:

# %%
q = X_toy[tokens.index('dolor')]
scores = X_toy @ q / np.sqrt(4)
weights = softmax(scores)
for tok, s, w in zip(tokens, scores, weights):
    print(f"dolor -> {tok:<8} puntuación {s:5.2f}   peso {w:.3f}")
output = weights @ X_toy
print(f"\nNuevo vector para 'dolor' (media ponderada de los valores): {output}")

# %% [markdown]
# «Dolor» atiende sobre todo a «pecho» (0,369), a sí mismo (0,334) y a «brazo» (0,176), y casi nada a «el», «paciente» o «tiene», los tokens sin características cardiacas ni de localización corporal. Su nuevo vector es una mezcla de esos tres, así que tras la atención «dolor» lleva información sobre dónde duele: la softmax decide el foco.

# %% [markdown]
# ## Paso 4: Por qué dividir por $\sqrt{d_k}$
#
# A medida que crece la dimensión $d_k$, los productos escalares crecen: su desviación típica es $\sqrt{d_k}$. Y una softmax de puntuaciones muy separadas se afila, hasta darle casi todo el peso a una sola clave. Podemos medirlo: con consultas y claves aleatorias, calculamos los pesos de atención de una consulta sobre 10 claves, con y sin el escalado, para dimensiones crecientes.

# %%
for d_k in [4, 64, 512]:
    q, K = rng.normal(size=d_k), rng.normal(size=(10, d_k))
    raw = K @ q
    w_raw, w_scaled = softmax(raw), softmax(raw / np.sqrt(d_k))
    print(f"d_k = {d_k:>3}: dispersión (desv. típica) de las puntuaciones {raw.std():6.2f} | mayor peso sin escalar {w_raw.max():.3f}, "
          f"escalando {w_scaled.max():.3f}")

# %% [markdown]
# Con $d_k = 4$ las puntuaciones son pequeñas y los pesos siguen repartidos con o sin escalado. Pero la dispersión de las puntuaciones crece con la dimensión (6,13 con 64 dimensiones, 32,88 con 512) y, sin escalar, la softmax se satura: con $d_k = 512$ una sola clave se lleva todo el peso (1,000) y las demás reciben prácticamente cero. Dividir por $\sqrt{d_k}$ devuelve las puntuaciones a una dispersión comparable en cualquier dimensión.
#
# > **Nota del kit: por qué $\sqrt{d_k}$ exactamente.** Si las componentes de $q$ y de $k$ son independientes, con media 0 y varianza 1, cada producto $q_i k_i$ tiene media 0 y varianza 1, así que su suma $q \cdot k$ tiene media 0 y varianza $d_k$, y $q \cdot k / \sqrt{d_k}$ tiene varianza 1. Ojo también con leer demasiado en una sola consulta: con otro sorteo, el mayor peso sin escalar con $d_k = 64$ puede salir mayor que con $d_k = 512$. Lo que crece con $d_k$ es el mayor peso **en promedio**; `lab.py`, el laboratorio de la clase, lo mide así, sobre 200 consultas.

# %% [markdown]
# ¿Y qué le pasa al gradiente? Se suele leer que una softmax saturada «apaga» el gradiente, y es verdad a medias. Lo medimos: para 1000 consultas en cada dimensión, cada una con 10 claves, calculamos el tamaño del gradiente que llega a la consulta, $\lVert \partial L / \partial q \rVert$, con y sin el escalado. Es el que, multiplicado por los tokens, llega a $W_Q$. La pérdida es $L = \sum_j w_j u_j$, con un número al azar $u_j$ por clave: lo que aporta cada clave a la pérdida. El gradiente atraviesa dos factores: la derivada de la softmax, $\partial L / \partial s_j = w_j\,(u_j - \sum_i w_i u_i)$, y la de las puntuaciones, $s = c\,Kq$, con $c = 1/\sqrt{d_k}$ escalando y $c = 1$ sin escalar. Los números salen de un generador hijo de `rng` (`rng.spawn`), que no cambia los que `rng` da después, así que el resto del cuaderno sigue mostrando los que cita el texto:

# %%
propio = rng.spawn(1)[0]
dimensiones = [4, 16, 64, 256, 1024]
n_consultas = 1000


def gradiente_en_q(q, K, u, c):
    """‖∂L/∂q‖ de cada consulta, para L = Σ_j w_j u_j con los pesos w = softmax(c · K q).

    q: (consultas, d_k); K: (consultas, 10, d_k), las 10 claves de cada consulta; u: (consultas, 10).
    """
    w = softmax(np.einsum("nkd,nd->nk", K, q) * c)                # los pesos de cada consulta sobre sus claves
    dL_ds = w * (u - np.sum(w * u, axis=-1, keepdims=True))        # la derivada de la softmax
    return np.linalg.norm(c * np.einsum("nkd,nk->nd", K, dL_ds), axis=-1)   # y la de las puntuaciones, s = c · K q


medianas, medias, casi_nada = [], [], []
for d_k in dimensiones:
    # Las 1000 consultas a la vez. Cada fila sortea, en este orden, q (d_k números), sus 10 claves (10 × d_k) y u (10).
    filas = propio.normal(size=(n_consultas, 11 * d_k + 10))
    q, K, u = filas[:, :d_k], filas[:, d_k:11 * d_k].reshape(n_consultas, 10, d_k), filas[:, 11 * d_k:]
    tamaños = np.column_stack([gradiente_en_q(q, K, u, 1.0), gradiente_en_q(q, K, u, 1 / np.sqrt(d_k))])
    medianas.append(np.median(tamaños, axis=0))                   # (sin escalar, escalando)
    medias.append(tamaños.mean(axis=0))
    casi_nada.append(np.mean(tamaños[:, 0] < 1e-3))              # sin escalar, las consultas que reciben menos de una milésima

fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), sharey=True)
for ax, valores, titulo in [(axes[0], np.array(medianas), "La consulta típica (mediana de 1000)"),
                            (axes[1], np.array(medias), "Lo que suma un lote (media de 1000)")]:
    ax.loglog(dimensiones, valores[:, 0], "o-", color="#c0392b", label="sin escalar")
    ax.loglog(dimensiones, valores[:, 1], "s-", color="#1f5fa8", label="dividiendo por √d_k")
    for d_k, valor_sin, valor_con in zip(dimensiones, valores[:, 0], valores[:, 1]):
        arriba = 6 if valor_sin >= valor_con else -12                 # la etiqueta de la curva de arriba, encima
        ax.annotate(f"{valor_sin:.2g}".replace(".", ","), (d_k, valor_sin), textcoords="offset points", xytext=(6, arriba),
                    fontsize=8, color="#c0392b")
        ax.annotate(f"{valor_con:.2g}".replace(".", ","), (d_k, valor_con), textcoords="offset points", xytext=(6, -6 - arriba),
                    fontsize=8, color="#1f5fa8")
    ax.set_xlabel("d_k")
    ax.set_xlim(2.5, 2500)
    ax.set_title(titulo)
    ax.legend(loc="lower left")
axes[0].annotate(f"el {100 * casi_nada[-1]:.0f} % recibe\nmenos de 0,001", (dimensiones[-1], medianas[-1][0]),
                 textcoords="offset points", xytext=(-95, 25), fontsize=8, color="#c0392b")
axes[0].set_ylabel("gradiente que llega a la consulta, ‖∂L/∂q‖")
axes[0].set_ylim(2e-5, 5)
fig.suptitle("Sin escalar, la consulta típica apenas recibe gradiente, pero la media no se apaga")
plt.tight_layout()
plt.show()

# %% [markdown]
# A la izquierda, la consulta típica. Sin escalar, su gradiente crece al principio (0,45 con $d_k = 4$, 0,6 con 16), pero desde $d_k = 64$ cae: 0,021 con 256 y $5{,}6 \times 10^{-5}$ con 1024, donde el 58 % de las consultas recibe menos de una milésima. Es la saturación: la derivada de la softmax se anula cuando un peso vale casi 1. Dividiendo por $\sqrt{d_k}$ se queda en torno a 0,3 en cualquier dimensión.
#
# A la derecha, la media, que no cae: sin escalar es mayor que escalando en todas las dimensiones, 3,1 veces con $d_k = 64$ (1 frente a 0,32). La consulta típica recibe poco, pero unas pocas, las que tienen dos claves casi empatadas en cabeza, reciben un gradiente enorme. Y al entrenar, el gradiente de $W_Q$ **suma** el de todas las consultas del lote, así que lo dominan esas pocas. Sin la escala, el gradiente no desaparece: se concentra en unas pocas consultas, y es más grande y más irregular. Con la misma tasa de aprendizaje, cada paso del entrenamiento es demasiado grande, y el laboratorio de ablación de la clase (`ablacion.py`, en esta carpeta) mide qué le pasa a un modelo que entrena así: con $d_k = 64$, el gradiente que llega a $W_Q$ y $W_K$ en los primeros pasos es mayor sin la escala en todas las semillas, y el entrenamiento se vuelve caótico y acaba peor.
#
# La sección 2 del [explorador interactivo](explorer.html#escala) te deja repetir el sorteo y comparar la entropía de los pesos con y sin escalado.

# %% [markdown] tags=["graded-only"]
# **Para pensar.** ¿Por qué, sin la escala, la media del gradiente es mayor, si la softmax está más saturada? Mira qué factor de $\partial L / \partial q$ cambia con el escalado además de la softmax. Es la pregunta 9, al final del cuaderno.

# %% [markdown]
# ## Paso 5: La autoatención sobre una frase, y la máscara causal
#
# En un Transformer real, $Q$, $K$ y $V$ no son los propios vectores de los tokens: cada una se obtiene multiplicando la matriz de vectores de los tokens $X$ por una matriz aprendida, $Q = XW^Q$, $K = XW^K$, $V = XW^V$. Con la frase entera a la vez, la atención produce una matriz de pesos: la fila $i$ dice cuánto atiende el token $i$ a cada token $j$. Aquí las proyecciones son aleatorias, como antes del entrenamiento.
#
# Los modelos de lenguaje como GPT generan texto de izquierda a derecha, así que un token no debe mirar los tokens que vienen después. Eso se consigue con una máscara causal, que da peso cero a todas las posiciones futuras. La celda siguiente aplica `attention`, la función del paso 3, a la frase entera, sin máscara y con ella, y dibuja los pesos de las dos:

# %%
sentence = ['el', 'paciente', 'tiene', 'dolor', 'torácico', 'que', 'irradia', 'al', 'brazo']
n, d_model, d_k = len(sentence), 8, 8
X = rng.normal(size=(n, d_model))                                   # embeddings de los tokens (sin entrenar)
W_Q, W_K, W_V = (rng.normal(0, 1 / np.sqrt(d_model), (d_model, d_k)) for _ in range(3))

out_full, w_full = attention(X @ W_Q, X @ W_K, X @ W_V)
causal = np.tril(np.ones((n, n), dtype=bool))                       # el token i solo puede ver los tokens 0..i
out_causal, w_causal = attention(X @ W_Q, X @ W_K, X @ W_V, mask=causal)
print(f"Forma de la salida: {out_full.shape} (un vector nuevo por token)")
print(f"Cada fila de pesos suma 1: {np.allclose(w_full.sum(axis=1), 1)}")
print(f"Con la máscara, peso dado a los tokens futuros: {w_causal[~causal].sum():.1f}")

fig, axes = plt.subplots(1, 2, figsize=(13, 5))
for ax, w, title in [(axes[0], w_full, 'Autoatención (cada token ve todos los tokens)'),
                     (axes[1], w_causal, 'Autoatención causal (sin mirar hacia delante)')]:
    ax.imshow(w, cmap='Blues', vmin=0, vmax=1)
    ax.set_xticks(range(n), sentence, rotation=45, ha='right')
    ax.set_yticks(range(n), sentence)
    ax.set_xlabel('atiende a (claves)')
    ax.set_ylabel('token (consultas)')
    ax.set_title(title)
plt.tight_layout()
plt.show()

# %% [markdown]
# Con parámetros aleatorios el patrón todavía no significa nada: el entrenamiento es lo que ajusta $W^Q$, $W^K$ y $W^V$ para que los tokens relacionados produzcan puntuaciones altas. Lo que importa aquí es la estructura. Cada token está conectado con todos los demás en un solo paso, sea cual sea la distancia entre ellos, que es justo lo que le faltaba a la RNN. Y la máscara causal deja solo el triángulo inferior.
#
# Como no hay recurrencia, ninguna posición tiene que esperar a la anterior: un Transformer calcula todas las posiciones a la vez. La máscara causal es lo que hace válido **entrenar en paralelo** así: la predicción del siguiente token en cada posición se calcula a la vez para toda la secuencia, sin que ninguna posición vea la respuesta. Un Transformer solo produce los tokens de uno en uno al *generar* texto, no al entrenar.
#
# **El precio de conectarlo todo.** La matriz de puntuaciones tiene $n \times n$ entradas, y cada una es un producto escalar de $d$ números: la atención cuesta $O(n^2 \cdot d)$ operaciones y $O(n^2)$ memoria por cabeza. Con estos 9 tokens son 81 puntuaciones; con un documento de 100 000 tokens serían $10^{10}$. Ese crecimiento cuadrático con la longitud $n$ es uno de los motivos principales de la investigación en contextos largos.

# %% [markdown]
# ## Paso 6: La atención multicabeza
#
# Una sola atención calcula una única noción de «relevancia». La atención multicabeza calcula $h$ a la vez, cada una con sus propias proyecciones, concatena los resultados y los mezcla con una matriz final $W^O$:
#
# $$\text{head}_i = \text{Attention}(XW_i^Q, XW_i^K, XW_i^V) \qquad \text{MultiHead}(X) = \text{Concat}(\text{head}_1, \dots, \text{head}_h)\,W^O$$
#
# Con la elección habitual $d_k = d_v = d_{\text{model}} / h$, la concatenación vuelve a tener $d_{\text{model}}$ columnas. La sección 3 del [explorador interactivo](explorer.html#cabezas) dibuja los pesos de varias cabezas sobre una misma frase. `init_multihead` crea esas proyecciones al azar y ya viene hecha:

# %%
# <reference: init_multihead>

# %% [raw]
# # BEGIN QUESTION
# name: multihead

# %% [markdown]
# **Ejercicio 2: `multihead`.** `heads` es una lista de tuplas `(W_Q, W_K, W_V)`, una por cabeza. Para cada cabeza, proyecta `X` y llama a tu `attention` (pasándole la máscara); concatena las salidas de todas las cabezas **una al lado de la otra** (por columnas) y multiplica por `W_O`. Devuelve solo la salida, un array de forma $(n, d_{\text{model}})$.
#
# Cada cabeza escala por **su propia** $d_k$, la de sus proyecciones, no por $d_{\text{model}}$: si llamas a `attention`, eso ya ocurre solo.
#
# Las pruebas ocultas usan cabezas con $d_k \neq d_v$ y con $d_k \neq d_{\text{model}}/h$: toma los tamaños de la forma de cada matriz (`W_Q.shape[1]`…), sin suponer que $d_k = d_v = d_{\text{model}}/h$. `W_O` tiene $h \cdot d_v$ filas.

# %%
def multihead(X, heads, W_O, mask=None):
    """Atención multicabeza.

    X: (n, d_model). heads: lista de tuplas (W_Q, W_K, W_V). W_O: (h * d_v, d_model).
    mask: matriz booleana (n, n) o None, la misma para todas las cabezas.
    Devuelve la salida de forma (n, d_model).
    """
    raise NotImplementedError("Implementa multihead: sustituye esta línea por tu código (paso 6).")


# %% [markdown] tags=["solution-note"]
# > **Por qué así.** Cada cabeza proyecta la **misma** `X` con sus tres matrices y llama a `attention` pasándole la máscara; de la tupla solo se usa la salida (`[0]`). Las salidas se concatenan por **columnas** (`axis=1`): la cabeza $i$ ocupa su propio bloque de columnas, que `W_O` mezcla después. Sumar las cabezas, o concatenarlas por filas, da otra forma o mezcla columnas que no corresponden. Cada cabeza escala por su propia $d_k$ (la de sus proyecciones) sin hacer nada especial, porque `attention` la lee de `K`. Olvidar pasar la máscara es el error más frecuente: la prueba pública del último token lo detecta.


# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_multihead_conserva_la_forma(multihead):
    import numpy as np
    rng = np.random.default_rng(7)
    heads = [tuple(rng.normal(size=(6, 3)) for _ in range(3)) for _ in range(2)]
    out = multihead(rng.normal(size=(4, 6)), heads, rng.normal(size=(6, 6)))
    assert np.shape(out) == (4, 6), f"Con 4 tokens y d_model = 6 la salida debe tener forma (4, 6), no {np.shape(out)}"

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_multihead_con_mascara_causal_ignora_los_tokens_futuros(multihead):
    import numpy as np
    rng = np.random.default_rng(8)
    heads = [tuple(rng.normal(size=(6, 3)) for _ in range(3)) for _ in range(2)]
    W_O = rng.normal(size=(6, 6))
    X = rng.normal(size=(4, 6))
    changed = X.copy()
    changed[3] += 5.0                                                  # solo cambia el último token
    causal = np.tril(np.ones((4, 4), dtype=bool))
    before, after = multihead(X, heads, W_O, mask=causal), multihead(changed, heads, W_O, mask=causal)
    assert np.allclose(before[:3], after[:3]), \
        "Con la máscara causal, cambiar el último token no debe cambiar la salida de los anteriores: ¿pasas la máscara a cada cabeza?"

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %%
heads, W_O = init_multihead(d_model=8, n_heads=2, rng=rng)
mh = multihead(X, heads, W_O, mask=causal)
n_params = sum([w.size for h in heads for w in h]) + W_O.size
print(f"2 cabezas de dimensión {heads[0][0].shape[1]}; forma de la salida {mh.shape}; parámetros {n_params}")

# %% [markdown]
# Cada cabeza *puede* especializarse en una relación distinta (concordancia, correferencia, posición relativa…), pero nada en el diseño se lo asigna: los roles emergen, o no, del entrenamiento, y interpretar cabezas es un área de investigación, no una garantía. Aquí, con parámetros aleatorios, ninguna cabeza significa nada todavía; el paso 9 muestra qué cambia al entrenar.

# %% [markdown]
# ## Paso 7: La codificación posicional
#
# Una propiedad sorprendente: la atención, por sí sola, es ciega al orden de las palabras. Si barajamos los tokens, cada token recibe exactamente la misma salida que antes, solo que en su nueva posición: barajar la entrada baraja la salida de la misma manera. Esta propiedad se llama **equivariancia a las permutaciones** (la atención es *equivariante*), y por eso, sin nada más, «el paciente atendió al doctor» y «el doctor atendió al paciente» dan a cada palabra el mismo vector. Comprobémoslo con `multihead`, la función del paso 6:

# %%
perm = rng.permutation(n)
out = multihead(X, heads, W_O)                       # sin máscara, para que el orden no lo imponga la máscara
out_shuffled = multihead(X[perm], heads, W_O)
print(f"Barajar los tokens solo baraja las salidas: {np.allclose(out[perm], out_shuffled)}")

# %% [markdown]
# «El paciente atendió al doctor» y «el doctor atendió al paciente» parecerían iguales. El Transformer lo resuelve sumando a cada vector de token una codificación posicional hecha de senos y cosenos de frecuencias distintas:
#
# $$PE_{(pos, 2i)} = \sin\left(\frac{pos}{10000^{2i/d_{\text{model}}}}\right) \qquad PE_{(pos, 2i+1)} = \cos\left(\frac{pos}{10000^{2i/d_{\text{model}}}}\right)$$
#
# Para cualquier desplazamiento $k$, la codificación de la posición $pos + k$ es una rotación de la codificación de $pos$, con una matriz que solo depende de $k$.
#
# > **Nota del kit: por qué es una rotación.** Bastan el seno y el coseno de una suma. Para cada frecuencia $\omega_i$,
# >
# > $$\begin{pmatrix}\sin((pos + k)\,\omega_i)\\ \cos((pos + k)\,\omega_i)\end{pmatrix} = \begin{pmatrix}\cos(k\,\omega_i) & \sin(k\,\omega_i)\\ -\sin(k\,\omega_i) & \cos(k\,\omega_i)\end{pmatrix}\begin{pmatrix}\sin(pos\,\omega_i)\\ \cos(pos\,\omega_i)\end{pmatrix}$$
# >
# > La matriz gira cada pareja (seno, coseno) un ángulo $k\,\omega_i$ y no depende de $pos$. Con una pareja por frecuencia, $R_k$ es diagonal por bloques de $2 \times 2$, un bloque por frecuencia.

# %% [raw]
# # BEGIN QUESTION
# name: positional_encoding

# %% [markdown]
# **Ejercicio 3: `positional_encoding`.** Devuelve la tupla `(pe, omega)`:
#
# - `omega`, un array 1-D con una frecuencia $\omega_i = 1 / 10000^{2i/d_{\text{model}}}$ por cada pareja de columnas, $2i = 0, 2, 4, \dots < d_{\text{model}}$;
# - `pe`, de forma `(n_positions, d_model)`: una fila por posición, con $\sin(pos\,\omega_i)$ en la columna $2i$ y $\cos(pos\,\omega_i)$ en la columna $2i + 1$, **intercalados** (seno, coseno, seno, coseno…).
#
# Tu función tiene que admitir también un $d_{\text{model}}$ **impar**: entonces la última columna es un seno cuyo coseno quedaría fuera de la matriz, y `omega` tiene $\lceil d_{\text{model}}/2 \rceil$ elementos.

# %%
def positional_encoding(n_positions, d_model):
    """Codificación posicional sinusoidal.

    Devuelve (pe, omega): pe de forma (n_positions, d_model), con senos en las columnas
    pares y cosenos en las impares, y omega con una frecuencia por cada pareja de columnas.
    """
    raise NotImplementedError("Implementa positional_encoding: sustituye esta línea por tu código (paso 7).")


# %% [markdown] tags=["solution-note"]
# > **Por qué así.** `omega` tiene una frecuencia por cada **pareja** de columnas: `np.arange(0, d_model, 2)` da $2i = 0, 2, 4, \dots$, y con $d_{\text{model}}$ impar produce $\lceil d_{\text{model}}/2 \rceil$ valores. Los senos van a las columnas pares (`pe[:, 0::2]`) y los cosenos a las impares (`pe[:, 1::2]`), **intercalados**, que es la convención del cuaderno y la que hace que la rotación $R_k$ del paso 7 sea diagonal por bloques de $2 \times 2$. El detalle de $d_{\text{model}}$ impar: hay una columna impar menos que pares, así que los cosenos usan `omega[: d_model // 2]`; sin ese recorte NumPy no puede asignar la matriz y la función falla en el caso oculto impar. Poner todos los senos en la primera mitad y los cosenos en la segunda es una permutación de las mismas columnas, pero rompe la convención que comprueban las pruebas.


# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_positional_encoding_da_formas_correctas_y_la_primera_fila(positional_encoding):
    import numpy as np
    result = positional_encoding(5, 6)
    assert isinstance(result, (tuple, list)) and len(result) == 2, "positional_encoding debe devolver la tupla (pe, omega)"
    pe, omega = result
    assert np.shape(pe) == (5, 6), f"pe debe tener forma (n_positions, d_model) = (5, 6), no {np.shape(pe)}"
    assert np.shape(omega) == (3,), f"Con d_model = 6 hay 3 frecuencias: omega debe tener forma (3,), no {np.shape(omega)}"
    assert np.allclose(pe[0], [0, 1, 0, 1, 0, 1]), \
        "En la posición 0 todos los senos valen 0 y todos los cosenos 1: la fila 0 debe ser (0, 1, 0, 1, …)"

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_positional_encoding_usa_la_base_10000(positional_encoding):
    import math
    import numpy as np
    # Con d_model = 4, la fórmula da ω_0 = 1 / 10000^0 = 1 y ω_1 = 1 / 10000^(2/4) = 1/100.
    pe, omega = positional_encoding(3, 4)
    assert np.allclose(omega, [1, 0.01]), \
        f"Con d_model = 4, ω_i = 1 / 10000^(2i/d_model) da ω = (1; 0,01), y tu omega es {np.round(omega, 6).tolist()}: ¿usas la base 10000?"
    assert np.allclose(pe[2], [math.sin(2), math.cos(2), math.sin(0.02), math.cos(0.02)]), \
        "En la posición 2 con d_model = 4, la fila debe ser (sin 2, cos 2, sin 0,02, cos 0,02), el seno y el coseno de los ángulos 2·ω_i, con tu omega, que es la correcta"

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_positional_encoding_pone_cada_pareja_en_el_circulo_unidad(positional_encoding):
    import numpy as np
    pe, omega = positional_encoding(20, 8)
    assert np.allclose(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, 1), \
        "Cada pareja (seno, coseno) de la misma frecuencia debe cumplir sin² + cos² = 1: ¿están intercaladas?"
    assert np.all(np.diff(omega) < 0), "Las frecuencias deben decrecer: rápidas en las primeras columnas, lentas en las últimas"

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# Construimos la codificación, la dibujamos y comprobamos la propiedad de la rotación numéricamente:

# %%
PE, omega = positional_encoding(100, 16)
plt.figure(figsize=(10, 4))
plt.imshow(PE.T, aspect='auto', cmap='RdBu')
plt.xlabel('posición en la secuencia')
plt.ylabel('dimensión')
plt.title('Codificación posicional sinusoidal: frecuencias rápidas arriba, lentas abajo')
plt.colorbar()
plt.show()

k = 3
R = np.zeros((16, 16))
for i, w in enumerate(omega):                        # matriz diagonal por bloques de rotaciones 2x2
    R[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[np.cos(k * w), np.sin(k * w)], [-np.sin(k * w), np.cos(k * w)]]
error = np.max(np.abs(PE[k:] - PE[:-k] @ R.T))
print(f"Mayor diferencia entre PE(pos + {k}) y R_{k} PE(pos), en todas las posiciones: {error:.1e}")

PE8 = positional_encoding(n, 8)[0]                  # la codificación para nuestros tokens de 8 dimensiones
out_pe = multihead(X + PE8, heads, W_O)
out_pe_shuffled = multihead(X[perm] + PE8, heads, W_O)
print(f"Con codificación posicional, barajar solo baraja las salidas: {np.allclose(out_pe[perm], out_pe_shuffled)}")

# %% [markdown]
# La propiedad de la rotación se cumple con una diferencia del orden de $10^{-15}$, es decir, exactamente salvo errores de redondeo (sus cifras cambian de un ordenador a otro; su tamaño, no): avanzar 3 posiciones es la misma rotación en cualquier punto de la secuencia. Y una vez sumada la codificación posicional, barajar los tokens sí cambia las salidas, así que el modelo ya puede distinguir «el paciente atendió al doctor» de «el doctor atendió al paciente». La sección 4 del [explorador interactivo](explorer.html#posiciones) muestra la matriz completa y cómo la similitud entre dos posiciones depende solo de su distancia.
#
# **Variantes modernas.** Los senos y cosenos del artículo original no son la única forma de dar posición: hay embeddings de posición aprendidos, y posiciones relativas o rotatorias.
#
# > **Nota del kit: las variantes, en detalle.**
# >
# > - **Embeddings de posición aprendidos**: un vector entrenado por cada posición, sumado al del token, como en BERT y GPT-2; no sirven para posiciones más allá de las vistas al entrenar.
# > - **Posiciones relativas**: en lugar de sumar una posición absoluta a cada token, la atención recibe información sobre la **distancia** entre consulta y clave.
# > - **Posiciones rotatorias** (*RoPE*): en lugar de sumar nada a los tokens, se rota cada pareja de coordenadas de $q$ y de $k$ con un ángulo proporcional a su posición, con bloques de $2 \times 2$ como los de $R_k$. Girar $n$ posiciones y deshacer después un giro de $m$ deja un giro de $n - m$: $R_m^\top R_n = R_{n-m}$. Por eso la puntuación entre una consulta en la posición $m$ y una clave en la posición $n$ es $(R_m q) \cdot (R_n k) = q^\top R_{n-m}\, k$: la posición entra solo a través del desplazamiento con signo $n - m$, nunca de las posiciones absolutas, y la puntuación sigue dependiendo de $q$ y de $k$, de lo que dice cada token.

# %% [markdown]
# ## Paso 8: Un bloque Transformer completo
#
# Un bloque Transformer lo combina todo: la atención multicabeza, que mezcla información entre tokens; una red feed-forward aplicada a cada token por separado, $\text{FFN}(x) = \text{ReLU}(xW_1 + b_1)W_2 + b_2$; y, alrededor de cada una, una conexión residual (clase 053) más una normalización de capa (clase 051), $\text{LayerNorm}(x + \text{Subcapa}(x))$. La conexión residual es una «autopista» para los gradientes, y la normalización resta a cada vector de token su media y lo divide por su desviación típica. Los grandes modelos de lenguaje apilan decenas de estos bloques. El recorrido completo, desde los tokens hasta el bloque siguiente:
#
# ![Diagrama de flujo de un bloque Transformer: tokens más codificación posicional, proyecciones, puntuaciones, máscara causal opcional, softmax por fila, salida, concatenación de cabezas, suma de la entrada y normalización, FFN por token, suma de la entrada y normalización, y el siguiente bloque; dos flechas verdes, las conexiones residuales, saltan cada subcapa y llevan su entrada hasta la suma](attachment:transformer_flow.png)
#
# > **Nota del kit: $\gamma$ y $\beta$.** La normalización de capa del artículo termina con dos vectores aprendidos de $d_{\text{model}}$ números cada uno, una ganancia $\gamma$ y un sesgo $\beta$: $\text{LayerNorm}(x) = \gamma \odot (x - \mu) / \sqrt{\sigma^2 + \varepsilon} + \beta$, con $\mu$ y $\sigma^2$ la media y la varianza del token. Esta `layer_norm` no los tiene (es como fijar $\gamma = 1$ y $\beta = 0$), y solo por eso su salida tiene media 0 y varianza 1 (salvo el pequeño $\varepsilon$). Con $\gamma$ y $\beta$ aprendidos, la media y la varianza de cada token a la salida las decide el entrenamiento.
#
# `layer_norm` ya viene hecha, sin parámetros aprendidos:

# %%
# <reference: layer_norm>

# %% [raw]
# # BEGIN QUESTION
# name: transformer_block

# %% [markdown]
# **Ejercicio 4: `transformer_block`.** Implementa el bloque **post-LN** del artículo original, en dos subcapas:
#
# 1. $x \leftarrow \text{LayerNorm}(x + \text{MultiHead}(x))$, pasando la máscara a `multihead`;
# 2. $\text{salida} = \text{LayerNorm}(x + \text{FFN}(x))$ con $\text{FFN}(x) = \text{ReLU}(xW_1 + b_1)W_2 + b_2$.
#
# Usa tus funciones `multihead` y `layer_norm`. La normalización es por token, es decir, por filas. Si prefieres escribir tu propia normalización de capa, sin parámetros aprendidos, cuenta como correcta con cualquier $\varepsilon$ entre 0 y el de la `layer_norm` que te damos, $10^{-5}$; uno mayor, como el $10^{-3}$ de Keras, no. Las pruebas ocultas incluyen un bloque de un solo token, tokens casi constantes (con poca varianza, donde $\varepsilon$ se nota) y valores de $d_{ff}$ distintos de $4\,d_{\text{model}}$.
#
# > **Nota del kit (errata).** Es frecuente ver el bloque escrito como $x \leftarrow x + \text{MultiHead}(\text{LayerNorm}(x))$ y $x \leftarrow x + \text{FFN}(\text{LayerNorm}(x))$. Esa es la variante **pre-LN**, la habitual en los modelos modernos (GPT-2 en adelante): normaliza la *entrada* de cada subcapa y deja la autopista residual limpia, lo que estabiliza el entrenamiento de pilas muy profundas. Aquí se evalúa la variante **post-LN** del artículo original, la de la fórmula de arriba. Las dos son correctas; simplemente no dan el mismo resultado.

# %%
def transformer_block(x, heads, W_O, W1, b1, W2, b2, mask=None):
    """Un bloque Transformer post-LN.

    x: (n, d_model). heads, W_O: como en multihead. W1: (d_model, d_ff), b1: (d_ff,),
    W2: (d_ff, d_model), b2: (d_model,). mask: booleana (n, n) o None.
    Devuelve un array de la misma forma que x.
    """
    raise NotImplementedError("Implementa transformer_block: sustituye esta línea por tu código (paso 8).")


# %% [markdown] tags=["solution-note"]
# > **Por qué así.** Es el bloque **post-LN**: se suma primero la subcapa a su entrada (la conexión residual) y **después** se normaliza, dos veces. La FFN recibe la `x` ya normalizada de la primera subcapa, y sus dos sesgos `b1` y `b2` cuentan. La variante pre-LN ($x + \text{MultiHead}(\text{LayerNorm}(x))$) es correcta, pero no es la variante que se pide: no normaliza la salida, así que ni la media 0 ni la varianza 1 de cada token se cumplen, y el corrector la reconoce y la nombra para que el estudiante sepa qué ha cambiado. La máscara se pasa a `multihead`, la única subcapa que mezcla tokens.


# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_transformer_block_conserva_la_forma_y_normaliza_cada_token(transformer_block):
    import numpy as np
    rng = np.random.default_rng(9)
    heads = [tuple(rng.normal(0, 0.4, size=(6, 3)) for _ in range(3)) for _ in range(2)]
    W_O = rng.normal(0, 0.4, size=(6, 6))
    W1, b1 = rng.normal(0, 0.4, size=(6, 12)), rng.normal(size=12)
    W2, b2 = rng.normal(0, 0.3, size=(12, 6)), rng.normal(size=6)
    y = transformer_block(3 + rng.normal(size=(5, 6)), heads, W_O, W1, b1, W2, b2)
    assert np.shape(y) == (5, 6), f"El bloque conserva la forma: esperaba (5, 6) y obtuve {np.shape(y)}"
    assert np.allclose(np.mean(y, axis=1), 0, atol=1e-6), \
        "Tras la última LayerNorm cada token (fila) debe tener media 0: ¿normalizas por filas y al final?"
    assert np.allclose(np.var(y, axis=1), 1, atol=1e-3), "Tras la última LayerNorm cada token (fila) debe tener varianza 1"

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_transformer_block_suma_la_entrada_en_cada_subcapa(transformer_block):
    import numpy as np
    # Con W_O y W2 a cero (y b2 = 0) ninguna subcapa aporta nada: solo la conexión residual lleva x hasta la salida,
    # que entonces es LayerNorm(x). Sin residuales, el bloque normalizaría ceros.
    rng = np.random.default_rng(11)
    x = rng.normal(size=(4, 6))
    heads = [tuple(rng.normal(0, 0.4, size=(6, 3)) for _ in range(3)) for _ in range(2)]
    W1, b1 = rng.normal(0, 0.4, size=(6, 12)), rng.normal(size=12)
    y = transformer_block(x, heads, np.zeros((6, 6)), W1, b1, np.zeros((12, 6)), np.zeros(6))
    normalizada = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + 1e-5)
    assert np.shape(y) == (4, 6) and np.allclose(y, normalizada, atol=1e-3), (
        "Con W_O y W2 a cero las dos subcapas no aportan nada, así que la salida debería ser LayerNorm(x): "
        "¿sumas la entrada x a la salida de cada subcapa (la conexión residual) antes de normalizar?")

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_modelo_entrenado_acierta_todos_los_maximos_acumulados(positional_encoding, transformer_block):
    import os
    import sys
    import numpy as np
    # Los pesos están junto al cuaderno; donde el kit corrige, en la carpeta de la clase, que está en sys.path.
    paths = [os.path.join(folder, "modelo_entrenado.npz") for folder in [os.getcwd(), *sys.path]]
    paths = [path for path in paths if os.path.isfile(path)]
    assert paths, "No encuentro modelo_entrenado.npz: abre el cuaderno en la carpeta de la clase, junto a ese archivo"
    with np.load(paths[0], allow_pickle=False) as archive:
        m = dict(archive)
    n, d_model = int(m["longitud"]), m["embeddings"].shape[1]
    heads = list(zip(m["W_Q"], m["W_K"], m["W_V"]))
    pe, causal = positional_encoding(n, d_model)[0], np.tril(np.ones((n, n), dtype=bool))
    # Las 100 primeras secuencias de prueba del paso 9: bastan para ver un fallo, y la prueba tarda poco.
    sequences = np.random.default_rng(2017).integers(0, len(m["embeddings"]), size=(200, n))[:100]
    right = 0
    for s in sequences:
        y = transformer_block(m["embeddings"][s] + pe, heads, m["W_O"], m["W1"], m["b1"], m["W2"], m["b2"], mask=causal)
        right += np.sum(np.argmax(y @ m["W_salida"] + m["b_salida"], axis=1) == np.maximum.accumulate(s))
    percent = f"{100 * right / sequences.size:.1f}".replace(".", ",")
    assert right == sequences.size, (
        f"Con tus funciones, el modelo entrenado del paso 9 acierta {right} de {sequences.size} dígitos ({percent} %); "
        "con las funciones de referencia los acierta todos, así que alguna de las cuatro que usa (attention, multihead, "
        "positional_encoding, transformer_block) no calcula lo que debe. Empieza por la que tenga una prueba pública "
        "que no se cumple; el informe de la entrega dice cuál es.")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %%
d_model, d_ff = 8, 32
W1, b1 = rng.normal(0, 1 / np.sqrt(d_model), (d_model, d_ff)), np.zeros(d_ff)
W2, b2 = rng.normal(0, 1 / np.sqrt(d_ff), (d_ff, d_model)), np.zeros(d_model)

x_in = X + PE8
y = transformer_block(x_in, heads, W_O, W1, b1, W2, b2, mask=causal)
n_block = n_params + W1.size + b1.size + W2.size + b2.size
print(f"Entrada {x_in.shape} -> salida {y.shape}")
print(f"Media de cada token de salida: {y.mean(axis=1).round(3)}")
print(f"Varianza de cada token de salida: {y.var(axis=1).round(3)}")
print(f"Parámetros de este bloque pequeño: {n_block}")

# %% [markdown]
# El bloque conserva la forma de la secuencia: entran 9 tokens de 8 dimensiones y salen 9 tokens de 8 dimensiones, cada uno mezclado ahora con su contexto. Tras la última normalización de capa, cada token tiene media 0 y varianza 1, porque esta `layer_norm` no tiene $\gamma$ ni $\beta$ (los `-0.` de las medias son ceros con signo: redondeos del orden de $10^{-17}$). Este bloque pequeño tiene 808 parámetros; en un gran modelo de lenguaje la misma estructura se repite en decenas de capas con miles de dimensiones, y así es como los modelos llegan a miles de millones de parámetros.
#
# > **Nota del kit: 808 o 840.** Los 808 son los de la atención (256) y la FFN (552), sin la ganancia $\gamma$ ni el sesgo $\beta$ de las dos LayerNorm, que esta `layer_norm` no tiene. El bloque del artículo sí los tiene, $2 \cdot d_{\text{model}}$ parámetros más por cada LayerNorm: con ellos, este bloque tendría $808 + 2 \cdot 2 \cdot 8 = 840$.
#
# Un último detalle: **la FFN no mezcla tokens**. Se aplica a cada fila por separado, así que cambiar un token solo cambia su propia fila de salida; toda la mezcla entre posiciones ocurre en la atención. La celda siguiente lo comprueba:

# %%
ffn = lambda z: np.maximum(0, z @ W1 + b1) @ W2 + b2
changed = x_in.copy()
changed[4] += 1.0                                    # cambiamos solo el token 4
rows_changed = np.flatnonzero(np.any(ffn(changed) != ffn(x_in), axis=1))
print(f"Filas de la FFN que cambian al tocar el token 4: {rows_changed}")

# %% [markdown]
# ## Paso 9: Un Transformer entrenado
#
# > **Nota del kit.** Este paso no está en el material de la clase: lo añade el kit para ver qué cambia al entrenar.
#
# Hasta aquí todos los parámetros eran aleatorios, y por eso ningún patrón de atención significaba nada. Para ver qué cambia al entrenar, el kit entrena, al preparar esta clase, un Transformer diminuto con **exactamente** la arquitectura de los pasos 3 a 8, y aquí lo ejecutamos con las funciones de esos pasos.

# %% [markdown] tags=["graded-only"]
# En este cuaderno esas funciones son **las tuyas**. Que el modelo acierte es una condición **necesaria, no suficiente**: un modelo entrenado tolera algunos errores (sin la escala $1/\sqrt{d_k}$, dividiendo por $d_k$ en su lugar, o sin una de las dos conexiones residuales, este sigue acertando los 1600 dígitos de prueba), así que lo que dice si cada función calcula lo que debe son sus pruebas públicas, `grader.check(...)`, y al entregar las ocultas. Si el modelo falla, en cambio, alguna función está mal seguro.

# %% [markdown]
# Su tarea es el **máximo acumulado**: lee una secuencia de dígitos y escribe, en cada posición, el mayor dígito visto hasta ella. Por ejemplo, `2 0 3 1 5 4 8 6` da `2 2 3 3 5 5 8 8`. Cada posición solo puede mirar hacia atrás, así que el bloque usa la máscara causal del paso 5. El modelo entero son tres pasos:
#
# 1. cada dígito se convierte en un vector, su fila de la matriz `embeddings`, y se le suma la codificación posicional de `positional_encoding`;
# 2. un bloque de `transformer_block`, con la máscara causal;
# 3. una proyección final, `W_salida` y `b_salida`, da una puntuación a cada dígito posible en cada posición, y el de mayor puntuación es la predicción.
#
# Sus parámetros están en `modelo_entrenado.npz`, en la carpeta de la clase. Salen del descenso del gradiente (con el optimizador Adam y la entropía cruzada como pérdida) sobre secuencias al azar; entrenar no forma parte del ejercicio. Cargamos el archivo:

# %%
try:
    with np.load("modelo_entrenado.npz") as archivo:
        modelo = dict(archivo)
except FileNotFoundError:
    raise FileNotFoundError("No encuentro modelo_entrenado.npz: abre el cuaderno desde la carpeta de la clase, "
                            "donde está ese archivo, sin separarlos.") from None
heads_entrenadas = list(zip(modelo["W_Q"], modelo["W_K"], modelo["W_V"]))
longitud, (n_digitos, d_modelo) = int(modelo["longitud"]), modelo["embeddings"].shape
n_pesos = sum([modelo[nombre].size for nombre in modelo if nombre != "longitud"])
print(f"Secuencias de {longitud} dígitos, del 0 al {n_digitos - 1}; d_model = {d_modelo}; "
      f"{len(heads_entrenadas)} cabezas de dimensión {heads_entrenadas[0][0].shape[1]}; "
      f"d_ff = {modelo['W1'].shape[1]}; {n_pesos} parámetros en total")

# %% [markdown]
# Con los pesos cargados, el modelo entero cabe en una función, con una línea por paso (la máscara causal es la del paso 5). La probamos con el ejemplo de arriba:

# %%
def mascara_causal(n):
    """El token i solo puede ver los tokens 0..i."""
    return np.tril(np.ones((n, n), dtype=bool))


def maximos(secuencia):
    """Los dígitos que escribe el modelo entrenado para una secuencia, con las funciones de los pasos 3 a 8."""
    x = modelo["embeddings"][secuencia] + positional_encoding(len(secuencia), d_modelo)[0]
    y = transformer_block(x, heads_entrenadas, modelo["W_O"], modelo["W1"], modelo["b1"], modelo["W2"], modelo["b2"],
                          mask=mascara_causal(len(secuencia)))
    return np.argmax(y @ modelo["W_salida"] + modelo["b_salida"], axis=1)


ejemplo = np.array([2, 0, 3, 1, 5, 4, 8, 6])
print(f"Entrada {ejemplo} -> el modelo escribe {maximos(ejemplo)}; la respuesta es {np.maximum.accumulate(ejemplo)}")

# %% [markdown]
# Un ejemplo no demuestra nada. Medimos la exactitud sobre 200 secuencias de prueba nuevas, sacadas al azar con una semilla propia. Con las funciones de referencia, el modelo acierta todos sus dígitos (el kit lo comprueba al entrenarlo), así que cualquier fallo aquí viene de las funciones con que se ejecuta:

# %%
prueba = np.random.default_rng(2017).integers(0, n_digitos, size=(200, longitud))
aciertos = np.array([maximos(s) == np.maximum.accumulate(s) for s in prueba])
porcentaje = f"{100 * aciertos.mean():.1f}".replace(".", ",")
print(f"El modelo acierta {aciertos.sum()} de {aciertos.size} dígitos ({porcentaje} %) "
      f"y {aciertos.all(axis=1).sum()} de {len(prueba)} secuencias enteras.")
if aciertos.all():
    print("Lo mismo que con las funciones de referencia. Acertar es necesario, no suficiente: este modelo también "
          "acierta los 1600 dígitos con algunos errores (sin la escala 1/√d_k, o sin una de las residuales), así que lo que comprueba cada función "
          "son sus pruebas públicas, grader.check(...).")
else:
    print("Con las funciones de referencia acierta todos los dígitos, así que alguna de las cuatro funciones no calcula "
          "lo que debe. Mira qué dicen las pruebas públicas de attention, multihead, positional_encoding y transformer_block.")

# %% [markdown]
# ¿Qué mira cada cabeza? Con `attention` sobre las proyecciones de cada cabeza dibujamos sus pesos de atención para la secuencia del ejemplo. Arriba, dos cabezas con parámetros aleatorios de `init_multihead`, como las del paso 6; abajo, las dos cabezas entrenadas. En cada fila, la etiqueta dice qué dígito lee esa posición y qué escribe el modelo:

# %%
def pesos_de(cabeza, secuencia):
    """Los pesos de atención de una cabeza (W_Q, W_K, W_V) sobre una secuencia, con attention."""
    W_Qc, W_Kc, W_Vc = cabeza
    x = modelo["embeddings"][secuencia] + positional_encoding(len(secuencia), d_modelo)[0]
    return attention(x @ W_Qc, x @ W_Kc, x @ W_Vc, mask=mascara_causal(len(secuencia)))[1]


heads_aleatorias, _ = init_multihead(d_modelo, len(heads_entrenadas), rng)
filas = [f"{d} → {p}" for d, p in zip(ejemplo, maximos(ejemplo))]
fig, axes = plt.subplots(2, len(heads_entrenadas), figsize=(11, 10))
for fila, (cabezas, cuales) in enumerate([(heads_aleatorias, "parámetros aleatorios"), (heads_entrenadas, "parámetros entrenados")]):
    for columna, cabeza in enumerate(cabezas):
        ax = axes[fila, columna]
        ax.imshow(pesos_de(cabeza, ejemplo), cmap='Blues', vmin=0, vmax=1)
        ax.set_xticks(range(len(ejemplo)), ejemplo)
        ax.set_yticks(range(len(ejemplo)), filas)
        ax.set_xlabel('atiende a (claves)')
        ax.set_ylabel('dígito → lo que escribe el modelo')
        ax.set_title(f'Cabeza {columna + 1}, {cuales}')
plt.tight_layout()
plt.show()

# %% [markdown]
# Abajo se ve una escalera: cada posición mira al mayor dígito visto hasta ella, y el escalón sube cada vez que aparece un dígito mayor. Pero una figura es una sola secuencia. Lo medimos en las 200 de prueba: qué fracción de su atención pone cada posición en el mayor dígito visto hasta ella (si se repite, en cualquiera de sus copias). Como referencia, también calculamos lo que daría repartir la atención por igual entre todo lo que ve cada posición:

# %%
def peso_en_el_maximo(pesos, secuencia):
    """Qué fracción de su atención pone, en promedio, cada posición en el mayor dígito visto hasta ella."""
    es_el_maximo = np.tril(secuencia[None, :] == np.maximum.accumulate(secuencia)[:, None])
    return np.sum(pesos * es_el_maximo, axis=1).mean()


uniformes = mascara_causal(longitud) / np.arange(1, longitud + 1)[:, None]   # la fila i reparte 1 entre i + 1 claves
print(f"Repartiendo por igual: {100 * np.mean([peso_en_el_maximo(uniformes, s) for s in prueba]):.0f} %")
for h, (aleatoria, entrenada) in enumerate(zip(heads_aleatorias, heads_entrenadas)):
    antes = np.mean([peso_en_el_maximo(pesos_de(aleatoria, s), s) for s in prueba])
    despues = np.mean([peso_en_el_maximo(pesos_de(entrenada, s), s) for s in prueba])
    print(f"Cabeza {h + 1}: {100 * antes:.0f} % con parámetros aleatorios, {100 * despues:.0f} % con parámetros entrenados")

# %% [markdown]
# **Los roles de las cabezas emergen del entrenamiento; nadie los asigna.** Nada en el código del modelo dice «busca el mayor dígito»: la arquitectura es la de los pasos 3 a 8, y el entrenamiento solo pedía acertar la salida. El descenso del gradiente ajustó $W^Q$ y $W^K$ hasta que la clave del mayor dígito visto diera la puntuación más alta para cada consulta, y la softmax hizo el resto. Con los parámetros aleatorios del paso 6, una cabeza puede separarse algo del reparto uniforme por pura casualidad, pero ninguna dibuja la escalera: para atribuir un rol a una cabeza hay que medirlo, no basta con mirar una figura.
#
# Fíjate también en lo que **no** ha pasado: las dos cabezas no se han repartido el trabajo, sino que han aprendido casi lo mismo. Es uno de los errores de la tabla «Errores conceptuales frecuentes», más abajo, «Cada cabeza tiene un rol interpretable asignado», visto en un caso concreto: el diseño multicabeza da a cada cabeza sus propias proyecciones, pero no le asigna ningún papel. En los modelos grandes pasa lo mismo a escala: algunas cabezas acaban con un rol reconocible, como seguir la posición anterior o una relación sintáctica (Voita et al., 2019, *Analyzing Multi-Head Self-Attention*), y muchas otras se pueden quitar sin que el modelo empeore apenas (Michel et al., 2019, *Are Sixteen Heads Really Better than One?*).

# %% [markdown]
# ## Más allá de los nueve pasos: lo que usan los Transformer de verdad
#
# > **Nota del kit.** Esta sección no está en el material de la clase. Muestra, con las funciones `attention` y `multihead` de los pasos 3 y 6, cinco piezas que los Transformer reales usan y que los pasos anteriores no necesitaban. No cuenta para la nota. Sus datos salen de un generador propio, así que no cambia ningún número de los pasos anteriores.

# %% [markdown] tags=["graded-only"]
# **Cinco ejercicios sin nota.** Tras cada demostración viene un ejercicio corto (A a E): una función de pocas líneas que escribes tú, y después su comprobación, `grader.check(...)`, que te dice si es correcta y, si no, por qué. Mientras no la escribas, la comprobación solo te recuerda que falta, sin detener el cuaderno. No cuentan para la nota: no tienen pruebas ocultas y al entregar no se corrigen, así que puedes dejarlos para el final.

# %% [markdown]
# ### La atención cruzada: de dónde salen $n \neq m$
#
# El Transformer original (Vaswani et al., 2017, *Attention Is All You Need*) tiene dos pilas de bloques: el **codificador** lee la frase de entrada y el **decodificador** escribe la salida, un token cada vez. Cada bloque del decodificador tiene, entre su autoatención y su FFN, una subcapa de **atención cruzada**: las consultas salen de los tokens que el decodificador ya ha escrito y las claves y los valores, de la salida del codificador. Por eso `attention` acepta $n$ consultas y $m$ claves distintas. Aquí, 3 tokens ya escritos consultan una frase de entrada de 5:

# %%
rng_extra = np.random.default_rng(2024)                           # un generador solo para esta sección
codificador = rng_extra.normal(size=(5, 8))                       # la salida del codificador: 5 tokens de entrada
decodificador = rng_extra.normal(size=(3, 8))                     # 3 tokens que el decodificador ya escribió
W_Qx, W_Kx, W_Vx = (rng_extra.normal(0, 1 / np.sqrt(8), size=(8, 4)) for _ in range(3))
salida_cruzada, pesos_cruzados = attention(decodificador @ W_Qx, codificador @ W_Kx, codificador @ W_Vx)
print(f"Pesos de forma {pesos_cruzados.shape}: 3 consultas del decodificador × 5 claves del codificador")
print(f"Salida de forma {salida_cruzada.shape}: un vector nuevo por cada token del decodificador")

# %% [markdown]
# Cada token del decodificador recibe una mezcla de los tokens de la **entrada**: así lee un traductor la frase original mientras escribe la traducción. Un modelo solo decodificador, como GPT, no tiene esta subcapa: su única atención es la autoatención con máscara causal del paso 5.

# %% [raw]
# # BEGIN QUESTION
# name: cruzada

# %% [markdown]
# **Ejercicio sin nota A: `atencion_cruzada`.** Escribe la subcapa de atención cruzada **multicabeza** de un bloque del decodificador. `Y` son los $n$ tokens que el decodificador ya ha escrito, de forma $(n, d_{\text{model}})$, y `Z` la salida del codificador, $m$ tokens de forma $(m, d_{\text{model}})$. Cada cabeza de `heads` es una tupla `(W_Q, W_K, W_V)`, como en `multihead`, pero las consultas se proyectan desde `Y` y las claves y los valores desde `Z`. Usa tu `attention`, sin máscara: el decodificador puede leer toda la frase de entrada. Concatena las salidas de las cabezas por columnas y multiplica por `W_O`, como en `multihead`. Devuelve un array de forma $(n, d_{\text{model}})$: una fila por token del decodificador.

# %% [raw]
# # BEGIN SOLUTION

# %%
# BEGIN SOLUTION NO PROMPT
def atencion_cruzada(Y, Z, heads, W_O):
    """Atención cruzada multicabeza: consultas de Y (n, d_model), claves y valores de Z (m, d_model).

    heads: lista de tuplas (W_Q, W_K, W_V), como en multihead. Devuelve un array (n, d_model).
    """
    salidas = [attention(Y @ W_Qc, Z @ W_Kc, Z @ W_Vc)[0] for W_Qc, W_Kc, W_Vc in heads]
    return np.concatenate(salidas, axis=1) @ W_O
# END SOLUTION
""" # BEGIN PROMPT
def atencion_cruzada(Y, Z, heads, W_O):
    """Atención cruzada multicabeza: consultas de Y (n, d_model), claves y valores de Z (m, d_model).

    heads: lista de tuplas (W_Q, W_K, W_V), como en multihead. Devuelve un array (n, d_model).
    """
    raise NotImplementedError("Escribe atencion_cruzada: sustituye esta línea por tu código (ejercicio sin nota).")
""" # END PROMPT

# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_cruzada_consulta_desde_el_decodificador_y_lee_el_codificador(atencion_cruzada, multihead):
    import numpy as np
    rng = np.random.default_rng(31)
    Y, Z = rng.normal(size=(3, 8)), rng.normal(size=(5, 8))              # n = 3 consultas, m = 5 claves
    heads = [tuple(rng.normal(0, 0.4, size=(8, 4)) for _ in range(3)) for _ in range(2)]
    W_O = rng.normal(0, 0.4, size=(8, 8))
    try:
        salida = np.asarray(atencion_cruzada(Y, Z, heads, W_O), dtype=float)
    except NotImplementedError as falta:
        raise AssertionError(f"Todavía no se puede comprobar: {falta}") from None
    assert salida.shape == (3, 8), (
        f"Con 3 tokens del decodificador y 5 del codificador, la salida debe tener forma (3, 8), una fila por "
        f"consulta, y tiene {salida.shape}" + (": ¿proyectas las consultas desde Z en lugar de desde Y?"
                                                 if salida.shape[:1] == (5,) else "."))
    otra = Y.copy()
    otra[2] += 1.0                                                       # solo cambia el token 2 del decodificador
    cambio = np.abs(np.asarray(atencion_cruzada(otra, Z, heads, W_O), dtype=float)[:2] - salida[:2]).max()
    assert cambio < 1e-9, ("Cambiar el token 2 del decodificador cambia la salida de los tokens 0 y 1: en la "
                           "atención cruzada las claves y los valores salen de Z, el codificador, no de Y.")
    try:
        propia = np.asarray(multihead(Z, heads, W_O), dtype=float)
    except NotImplementedError as falta:
        raise AssertionError("La forma y de qué depende cada fila son correctas. Falta compararla con tu multihead, "
                             f"que todavía no se puede usar: {falta}") from None
    assert np.allclose(np.asarray(atencion_cruzada(Z, Z, heads, W_O), dtype=float), propia), (
        "Con Y = Z, la atención cruzada es la autoatención y debería dar lo mismo que tu multihead(Z, heads, W_O), "
        "pero no da lo mismo. Si tu multihead cumple sus pruebas públicas, revisa qué matriz proyecta cada cosa y "
        "cómo juntas las cabezas.")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ### Las máscaras de relleno
#
# Para procesar varias frases a la vez, las cortas se rellenan con tokens de relleno hasta la longitud de la más larga, y nadie debe atender a ese relleno. La **máscara de relleno** pone a `False` las columnas de esas claves. Importa sobre todo en la atención **bidireccional**, la de un codificador (o la atención cruzada sobre una frase de entrada rellenada), donde cada token mira toda la frase: sin ella, los tokens reales atienden también al relleno y su salida cambia. En un decodificador con el relleno a la derecha, la máscara causal ya lo esconde de los tokens reales, porque va detrás de ellos. Lo comprobamos con una frase de 3 tokens rellenada hasta 5:

# %%
frase = rng_extra.normal(size=(3, 8))                              # una frase de 3 tokens...
rellenada = np.vstack([frase, np.zeros((2, 8))])                   # ...rellenada hasta 5 con dos tokens de relleno
reales = np.array([True, True, True, False, False])
proyecta = lambda x: (x @ W_Qx, x @ W_Kx, x @ W_Vx)               # las proyecciones de la atención cruzada de arriba

sola, _ = attention(*proyecta(frase))                              # un codificador: cada token mira toda la frase
salida_sin, _ = attention(*proyecta(rellenada))
salida_con, pesos_relleno = attention(*proyecta(rellenada), mask=np.tile(reales, (5, 1)))
print(f"Codificador sin máscara de relleno: los tokens reales cambian hasta {np.abs(salida_sin[:3] - sola).max():.2f}")
print(f"Codificador con máscara de relleno: peso sobre el relleno {pesos_relleno[:, ~reales].sum():.1f}; "
      f"los tokens reales cambian hasta {np.abs(salida_con[:3] - sola).max():.2f}")

causal_sola, _ = attention(*proyecta(frase), mask=mascara_causal(3))
causal_rellenada, _ = attention(*proyecta(rellenada), mask=mascara_causal(5))
print(f"Decodificador con solo la máscara causal: los tokens reales cambian hasta {np.abs(causal_rellenada[:3] - causal_sola).max():.2f}")

# %% [markdown]
# En el codificador, sin la máscara de relleno los tokens reales cambian de forma visible; con ella salen iguales que los de la frase sola (la diferencia es cero o del orden del redondeo, $10^{-16}$, que se imprime como 0.00). En el decodificador, la máscara causal sola ya basta para los tokens reales: ahí la máscara de relleno solo cambia las filas de relleno, cuya salida se descarta. Con el relleno a la **izquierda**, como se suele rellenar al generar por lotes, los tokens reales sí verían el relleno, y haría falta también allí.

# %% [raw]
# # BEGIN QUESTION
# name: relleno

# %% [markdown]
# **Ejercicio sin nota B: `mascara_relleno`.** Un codificador lee un lote de frases, rellenadas hasta la misma longitud $n$; `longitudes` dice cuántos tokens reales tiene cada una. Escribe `mascara_relleno(longitudes, n)`, que devuelva un array booleano de forma `(len(longitudes), n, n)`: la máscara de cada frase, en la que la consulta $i$ puede mirar la clave $j$ solo si $j$ es un token real de esa frase. Es un codificador, así que no hay máscara causal: cada token mira toda su frase. Como en la demostración, el relleno se quita de las **claves** (las columnas): las filas de relleno siguen mirando los tokens reales y reciben una salida que luego se descarta. Puedes hacerlo sin bucles, comparando `np.arange(n)` con las longitudes.

# %% [raw]
# # BEGIN SOLUTION

# %%
# BEGIN SOLUTION NO PROMPT
def mascara_relleno(longitudes, n):
    """Las máscaras de un lote de frases rellenadas hasta n tokens, para un codificador: (len(longitudes), n, n), booleana.

    En la de la frase b, la consulta i puede mirar la clave j si j < longitudes[b].
    """
    reales = np.arange(n)[None, :] < np.asarray(longitudes)[:, None]   # (frases, n): qué claves son reales
    return np.repeat(reales[:, None, :], n, axis=1)                    # la misma fila para cada consulta
# END SOLUTION
""" # BEGIN PROMPT
def mascara_relleno(longitudes, n):
    """Las máscaras de un lote de frases rellenadas hasta n tokens, para un codificador: (len(longitudes), n, n), booleana.

    En la de la frase b, la consulta i puede mirar la clave j si j < longitudes[b].
    """
    raise NotImplementedError("Escribe mascara_relleno: sustituye esta línea por tu código (ejercicio sin nota).")
""" # END PROMPT

# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_relleno_quita_el_relleno_de_las_claves(mascara_relleno):
    import numpy as np
    longitudes, n = [3, 1, 4], 4
    try:
        mascara = np.asarray(mascara_relleno(longitudes, n))
    except NotImplementedError as falta:
        raise AssertionError(f"Todavía no se puede comprobar: {falta}") from None
    assert mascara.shape == (3, 4, 4), (f"Con 3 frases rellenadas hasta 4 tokens, la máscara debe tener forma (3, 4, 4), "
                                        f"una matriz de 4 × 4 por frase, y tiene {mascara.shape}.")
    assert mascara.dtype == bool, f"La máscara debe ser booleana (True: «puede atender»), y es de tipo {mascara.dtype}."
    for b, longitud in enumerate(longitudes):
        for i in range(n):
            assert mascara[b, i].any(), (
                f"En la frase {b}, la fila {i} no puede mirar ninguna clave: todas sus puntuaciones serían −∞ y la "
                "softmax daría NaN. El relleno se quita de las claves (las columnas), no de las consultas (las filas).")
        assert not mascara[b][:, longitud:].any(), (
            f"En la frase {b}, que tiene {longitud} tokens reales, tu máscara deja mirar claves de relleno "
            f"(las columnas {longitud} a {n - 1}): quítalas de todas las filas.")
        for i in range(n):
            permitidas = np.flatnonzero(mascara[b, i]).tolist()
            assert permitidas == list(range(longitud)), (
                f"En la frase {b}, la fila {i} debería poder mirar las claves 0 a {longitud - 1}, todos sus tokens "
                f"reales, y tu máscara le deja {permitidas}: quitas más de lo que hace falta"
                + (". En un codificador no hay máscara causal: cada token mira toda su frase, también lo que viene "
                   "después." if set(permitidas) < set(range(longitud)) and max(permitidas) <= i else "."))

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ### Todas las cabezas con una sola matriz
#
# La `multihead` del paso 6 recorre una lista de cabezas. Las implementaciones reales (el *Annotated Transformer* de Harvard, nanoGPT de Karpathy) guardan las proyecciones de todas las cabezas en **una** matriz de $d_{\text{model}} \times h\,d_k$, hacen un solo producto y separan las cabezas con `reshape` y `transpose`; las $h$ atenciones se calculan entonces a la vez, como un solo producto de matrices con un eje más. Es exactamente la misma cuenta:

# %%
x_cabezas = rng_extra.normal(size=(6, 8))
heads_demo, W_O_demo = init_multihead(8, 2, rng_extra)
W_Q_todas, W_K_todas, W_V_todas = (np.hstack([cabeza[i] for cabeza in heads_demo]) for i in range(3))
n_cabezas, d_k_cabeza = len(heads_demo), heads_demo[0][0].shape[1]


def separa_cabezas(M):
    """(n, h·d_k) -> (h, n, d_k): una matriz por cabeza."""
    return M.reshape(len(M), n_cabezas, -1).transpose(1, 0, 2)


Qs, Ks, Vs = (separa_cabezas(x_cabezas @ W) for W in (W_Q_todas, W_K_todas, W_V_todas))
salidas = softmax(Qs @ Ks.transpose(0, 2, 1) / np.sqrt(d_k_cabeza)) @ Vs       # las h cabezas a la vez
juntas = salidas.transpose(1, 0, 2).reshape(len(x_cabezas), -1) @ W_O_demo    # concatenar y mezclar con W_O
print(f"W_Q de todas las cabezas: forma {W_Q_todas.shape}; las cabezas separadas: forma {Qs.shape}")
print(f"Mayor diferencia con multihead, la de la lista de cabezas: {np.abs(juntas - multihead(x_cabezas, heads_demo, W_O_demo)).max():.1e}")

# %% [markdown]
# El orden importa: `reshape` a $(n, h, d_k)$ y **después** `transpose`. Un `reshape` directo a $(h, n, d_k)$ daría matrices del mismo tamaño, pero mezclaría filas de tokens distintos en cada cabeza.

# %% [raw]
# # BEGIN QUESTION
# name: cabezas

# %% [markdown]
# **Ejercicio sin nota C: `multicabeza_fusionada`.** Escribe la atención multicabeza con las proyecciones de las $h$ cabezas juntas en tres matrices de $d_{\text{model}} \times d_{\text{model}}$: la cabeza $i$ son las columnas $i\,d_k$ a $(i + 1)\,d_k - 1$ de `W_Q`, `W_K` y `W_V`, con $d_k = d_{\text{model}} / h$. Sin recorrer las cabezas con un bucle: un producto por matriz, `reshape` y `transpose` para separar las cabezas, las puntuaciones de las $h$ cabezas a la vez (`@` multiplica pila contra pila de matrices, y la `softmax` dada acepta arrays de tres ejes), la máscara `mask`, si la hay, la misma en todas las cabezas, y al final las cabezas juntas otra vez por columnas y multiplicadas por `W_O`. Debe dar lo mismo que tu `multihead` con la lista de cabezas que forman esas columnas.

# %% [raw]
# # BEGIN SOLUTION

# %%
# BEGIN SOLUTION NO PROMPT
def multicabeza_fusionada(X, W_Q, W_K, W_V, W_O, h, mask=None):
    """La atención multicabeza con las h cabezas en tres matrices (d_model, d_model), sin bucle sobre las cabezas.

    La cabeza i son las columnas i·d_k a (i + 1)·d_k - 1 de W_Q, W_K y W_V, con d_k = d_model / h.
    Devuelve lo mismo que multihead: un array (n, d_model).
    """
    n, d_model = X.shape
    d_k = d_model // h

    def separa(M):                                                  # (n, h·d_k) -> (h, n, d_k)
        return M.reshape(n, h, d_k).transpose(1, 0, 2)

    Qs, Ks, Vs = separa(X @ W_Q), separa(X @ W_K), separa(X @ W_V)
    puntuaciones = Qs @ Ks.transpose(0, 2, 1) / np.sqrt(d_k)        # (h, n, n): las h cabezas a la vez
    if mask is not None:
        puntuaciones = np.where(mask, puntuaciones, -np.inf)        # la misma máscara (n, n) en cada cabeza
    salidas = softmax(puntuaciones, axis=-1) @ Vs                   # (h, n, d_k)
    return salidas.transpose(1, 0, 2).reshape(n, d_model) @ W_O
# END SOLUTION
""" # BEGIN PROMPT
def multicabeza_fusionada(X, W_Q, W_K, W_V, W_O, h, mask=None):
    """La atención multicabeza con las h cabezas en tres matrices (d_model, d_model), sin bucle sobre las cabezas.

    La cabeza i son las columnas i·d_k a (i + 1)·d_k - 1 de W_Q, W_K y W_V, con d_k = d_model / h.
    Devuelve lo mismo que multihead: un array (n, d_model).
    """
    raise NotImplementedError("Escribe multicabeza_fusionada: sustituye esta línea por tu código (ejercicio sin nota).")
""" # END PROMPT

# %% [markdown] tags=["solution-note"]
# > **Por qué así.** `separa` hace `reshape` a $(n, h, d_k)$ y **después** `transpose` a $(h, n, d_k)$: cada fila de `X @ W_Q` es un token, y sus $h \cdot d_k$ columnas son las de sus $h$ cabezas una tras otra. `@` entre pilas de matrices multiplica cabeza con cabeza, la máscara de $(n, n)$ se extiende sola a las $h$ cabezas, y el camino inverso, `transpose` y `reshape` a $(n, d_{\text{model}})$, es la concatenación por columnas de `multihead`.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_cabezas_una_matriz_da_lo_mismo_que_la_lista_de_cabezas(multicabeza_fusionada, multihead):
    import numpy as np
    rng = np.random.default_rng(32)
    n, d_model = 5, 8
    X = rng.normal(size=(n, d_model))
    W_Q, W_K, W_V, W_O = (rng.normal(0, 0.5, size=(d_model, d_model)) for _ in range(4))
    causal = np.tril(np.ones((n, n), dtype=bool))

    def coinciden(h, mask=None, W_Q=W_Q):
        d_k = d_model // h
        lista = [tuple(W[:, i * d_k:(i + 1) * d_k] for W in (W_Q, W_K, W_V)) for i in range(h)]
        try:
            mia = np.asarray(multicabeza_fusionada(X, W_Q, W_K, W_V, W_O, h, mask), dtype=float)
            de_multihead = np.asarray(multihead(X, lista, W_O, mask), dtype=float)
        except NotImplementedError as falta:
            raise AssertionError(f"Todavía no se puede comprobar: {falta}") from None
        assert mia.shape == (n, d_model), (f"Con {n} tokens y d_model = {d_model} la salida debe tener forma "
                                           f"{(n, d_model)}, y tiene {mia.shape}.")
        return np.allclose(mia, de_multihead)

    if not coinciden(2):
        # With every score 0 each head weighs its keys equally, whatever the scale or the softmax's axis:
        # what is left to differ is how the heads are split and joined.
        assert coinciden(2, W_Q=np.zeros_like(W_Q)), (
            "No da lo mismo que tu multihead con la lista de cabezas, ni siquiera cuando todas las puntuaciones son "
            "iguales: revisa cómo separas las cabezas (reshape a (n, h, d_k) y después transpose, no un reshape "
            "directo a (h, n, d_k)) y cómo las juntas al final (el camino inverso).")
        raise AssertionError(
            "Separas y juntas bien las cabezas, pero sus pesos no son los de tu multihead: cada cabeza divide por la "
            "raíz de su propia d_k = d_model / h (no de d_model), y la softmax va por filas, sobre el último eje.")
    assert coinciden(4), "Con 2 cabezas coincide con tu multihead y con 4 no: ¿das por hecho que h = 2 en algún sitio?"
    assert coinciden(2, causal), (
        "Sin máscara coincide con tu multihead y con la máscara causal no: pon −∞ en las puntuaciones prohibidas de "
        "todas las cabezas antes de la softmax (una máscara (n, n) se extiende sola a (h, n, n)).")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ### Generar token a token, con una caché KV
#
# Un modelo de lenguaje genera un token cada vez, y con la máscara causal el token $t$ solo mira los anteriores. Así que las claves y los valores de los tokens ya escritos no cambian al añadir uno nuevo: se guardan en una **caché KV**, y en cada paso se proyecta solo el token nuevo y se calcula una sola consulta contra la caché. El resultado es el de recalcularlo todo con la máscara causal:

# %%
T_kv = 12
secuencia_kv = rng_extra.normal(size=(T_kv, 8))
W_Qc, W_Kc, W_Vc = heads_demo[0]
completa, _ = attention(secuencia_kv @ W_Qc, secuencia_kv @ W_Kc, secuencia_kv @ W_Vc, mask=mascara_causal(T_kv))

K_cache, V_cache, filas_kv = np.zeros((0, W_Kc.shape[1])), np.zeros((0, W_Vc.shape[1])), []
for t in range(T_kv):
    x_t = secuencia_kv[t:t + 1]                                     # solo el token nuevo, de forma (1, d_model)
    K_cache = np.vstack([K_cache, x_t @ W_Kc])                      # su clave y su valor se añaden a la caché
    V_cache = np.vstack([V_cache, x_t @ W_Vc])
    filas_kv.append(attention(x_t @ W_Qc, K_cache, V_cache)[0])    # una consulta contra todo lo anterior, sin máscara
print(f"Mayor diferencia entre la caché y el cálculo completo: {np.abs(np.vstack(filas_kv) - completa).max():.1e}")
print(f"Tokens proyectados: {T_kv} con la caché; {T_kv * (T_kv + 1) // 2} recalculando toda la secuencia en cada paso")

# %% [markdown]
# Con la caché no hace falta máscara: la caché solo contiene el pasado. El precio es la memoria, dos matrices que crecen con cada token, por capa y por cabeza; en los modelos grandes, con contextos largos y muchas peticiones a la vez, la caché puede ocupar más memoria que los propios pesos.

# %% [raw]
# # BEGIN QUESTION
# name: cache_kv

# %% [markdown]
# **Ejercicio sin nota D: `paso_con_cache`.** Escribe un paso de generación con caché: `x_nuevo` es el vector del token nuevo, de forma $(1, d_{\text{model}})$, y `K_cache` y `V_cache` son las claves y los valores de los tokens anteriores, de formas $(t, d_k)$ y $(t, d_v)$ ($t = 0$ en el primer paso). Proyecta **solo** el token nuevo, añade su clave y su valor al final de la caché, y calcula con tu `attention` su consulta contra toda la caché. Devuelve la tupla `(salida, K_cache, V_cache)`: la salida de forma $(1, d_v)$ y la caché con una fila más.
#
# La comprobación genera 10 tokens con tu paso, cada uno a partir de la salida del anterior (como un modelo que escribe), y los compara con la atención causal completa de la secuencia generada.

# %% [raw]
# # BEGIN SOLUTION

# %%
# BEGIN SOLUTION NO PROMPT
def paso_con_cache(x_nuevo, K_cache, V_cache, W_Q, W_K, W_V):
    """Un paso de generación con caché KV.

    x_nuevo: (1, d_model). K_cache: (t, d_k) y V_cache: (t, d_v), las de los tokens anteriores.
    Devuelve (salida, K_cache, V_cache): la salida (1, d_v) y la caché con la fila del token nuevo al final.
    """
    K_cache = np.vstack([K_cache, x_nuevo @ W_K])                  # su clave y su valor, al final de la caché
    V_cache = np.vstack([V_cache, x_nuevo @ W_V])
    salida, _ = attention(x_nuevo @ W_Q, K_cache, V_cache)         # una consulta contra toda la caché, sin máscara
    return salida, K_cache, V_cache
# END SOLUTION
""" # BEGIN PROMPT
def paso_con_cache(x_nuevo, K_cache, V_cache, W_Q, W_K, W_V):
    """Un paso de generación con caché KV.

    x_nuevo: (1, d_model). K_cache: (t, d_k) y V_cache: (t, d_v), las de los tokens anteriores.
    Devuelve (salida, K_cache, V_cache): la salida (1, d_v) y la caché con la fila del token nuevo al final.
    """
    raise NotImplementedError("Escribe paso_con_cache: sustituye esta línea por tu código (ejercicio sin nota).")
""" # END PROMPT

# %% [markdown] tags=["solution-note"]
# > **Por qué así.** Con la máscara causal, la fila $t$ de la atención completa solo usa las claves y los valores $0..t$, que no cambian al añadir tokens después. Por eso basta con guardarlos: cada paso proyecta un token y calcula una fila, y no necesita máscara porque la caché no tiene futuro.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_cache_kv_genera_lo_mismo_que_la_atencion_causal_completa(paso_con_cache, attention):
    import numpy as np
    rng = np.random.default_rng(33)
    d_model, d_k, pasos = 8, 4, 10
    W_Q, W_K, W_V = (rng.normal(0, 0.5, size=(d_model, d_k)) for _ in range(3))
    W_E = rng.normal(0, 0.5, size=(d_k, d_model))                   # lleva cada salida a d_model: el token siguiente
    x = rng.normal(size=(1, d_model))
    # Un paso con una caché que ya tiene 3 tokens, cuyas claves y valores no salen de x.
    K_antes, V_antes = rng.normal(size=(3, d_k)), rng.normal(size=(3, d_k))
    try:
        salida, K_despues, V_despues = (np.asarray(a, dtype=float) for a in
                                        paso_con_cache(x, K_antes.copy(), V_antes.copy(), W_Q, W_K, W_V))
        esperada = attention(x @ W_Q, np.vstack([K_antes, x @ W_K]), np.vstack([V_antes, x @ W_V]))[0]
    except NotImplementedError as falta:
        raise AssertionError(f"Todavía no se puede comprobar: {falta}") from None
    assert K_despues.shape == V_despues.shape == (4, d_k), (
        f"La caché crece una fila por paso: con 3 tokens antes, devuelve claves y valores de forma (4, {d_k}), "
        f"y devuelves {K_despues.shape} y {V_despues.shape}.")
    assert np.allclose(K_despues[:3], K_antes) and np.allclose(V_despues[:3], V_antes), (
        "Las filas que ya estaban en la caché no cambian: añade la clave y el valor del token nuevo al final.")
    assert salida.shape == (1, d_k), f"La salida es la de un solo token, de forma (1, {d_k}), y tiene forma {salida.shape}."
    if not np.allclose(salida, esperada):
        assert not np.allclose(salida, attention(x @ W_Q, K_antes, V_antes)[0]), (
            "El token nuevo también se mira a sí mismo: añade su clave y su valor a la caché antes de calcular la atención.")
        raise AssertionError(
            "La salida no es la de la consulta del token nuevo contra toda la caché. Usa K_cache y V_cache tal como "
            "llegan, sin recalcularlas, y sin máscara: la caché solo tiene el pasado y el propio token.")
    K_cache, V_cache, entradas, salidas = np.zeros((0, d_k)), np.zeros((0, d_k)), [], []
    for paso in range(pasos):
        entradas.append(x)
        y, K_cache, V_cache = paso_con_cache(x, K_cache, V_cache, W_Q, W_K, W_V)
        salidas.append(np.asarray(y, dtype=float))
        x = np.tanh(salidas[-1] @ W_E)                              # el token siguiente sale de esta salida
    X = np.vstack(entradas)
    completa = attention(X @ W_Q, X @ W_K, X @ W_V, mask=np.tril(np.ones((pasos, pasos), dtype=bool)))[0]
    assert np.allclose(np.vstack(salidas), completa), (
        "Un paso suelto es correcto, pero los 10 tokens generados con la caché no coinciden con la atención causal "
        "completa de la secuencia: ¿empieza cada generación con la caché vacía, y pasas a cada paso la caché que "
        "devolvió el anterior? Si tu attention no cumple sus pruebas públicas con la máscara causal, arréglala antes.")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ### El camino entre dos tokens: la tabla 1 del artículo
#
# En el paso 2, la influencia del principio de la secuencia en una RNN tenía que atravesar un jacobiano por token y se desvanecía. En la atención, el último token mira al primero **directamente**: el camino tiene longitud 1. Medimos lo mismo en las dos, sobre la secuencia de 60 vectores de dimensión 16 del paso 2: cuánto cambia la salida de la última posición al mover el **primer token**, $\partial y_T / \partial x_1$ con una cabeza de atención al azar (por diferencias finitas) y $\partial h_T / \partial x_1$ con la RNN del paso 2 (con la regla de la cadena, como allí):

# %%
d_g = 16
W_Qg, W_Kg, W_Vg = (rng_extra.normal(0, 1 / np.sqrt(d_g), size=(d_g, d_g)) for _ in range(3))


def salida_final(X):
    """La salida de atención de la última posición de X, que mira a todas."""
    return attention(X[-1:] @ W_Qg, X @ W_Kg, X @ W_Vg)[0][0]


# La RNN del paso 2 sobre la misma secuencia: d h_T / d x_1 = diag(1 - h_T²) W ··· diag(1 - h_2²) W · diag(1 - h_1²) U.
h, d_h_d_x1, rnn = np.zeros(d_hidden), None, []
for t, x in enumerate(inputs):
    h = np.tanh(W @ h + U @ x)
    d_h_d_x1 = np.diag(1 - h ** 2) @ (U if t == 0 else W @ d_h_d_x1)
    rnn.append(np.linalg.norm(d_h_d_x1))

paso = 1e-6
atencion = []
for T in [1, 5, 10, 20, 40, 60]:
    X = inputs[:T]
    jacobiano = np.zeros((d_g, d_g))
    for j in range(d_g):                                      # una columna del jacobiano por coordenada de x_1
        arriba, abajo = X.copy(), X.copy()
        arriba[0, j] += paso
        abajo[0, j] -= paso
        jacobiano[:, j] = (salida_final(arriba) - salida_final(abajo)) / (2 * paso)
    atencion.append(np.linalg.norm(jacobiano))
    print(f"Tras {T:>2} {'token, ' if T == 1 else 'tokens,'} d y_T / d x_1 con atención: {atencion[-1]:.2e}; "
          f"d h_T / d x_1 con la RNN: {rnn[T - 1]:.2e}")

# %% [markdown]
# La sensibilidad de la atención baja a medida que la última consulta reparte su atención entre más tokens, de 4,1 con un token a 0,040 con 60, pero no se desvanece exponencialmente: tras 60 tokens sigue siendo del orden de $10^{-2}$, donde la de la RNN, sobre la misma secuencia, ha caído a $1{,}3 \times 10^{-13}$. Lo que decide cuánto influye el primer token es el peso que la consulta le da, no cuántos tokens hay entre los dos. Es solo una cabeza al azar, pero la diferencia no es de tamaño sino de forma: la RNN multiplica un factor por token, y la atención no. Es la última columna de la tabla 1 del artículo original, que compara los tipos de capa para una secuencia de $n$ tokens de dimensión $d$ (con núcleos de tamaño $k$ en las convolucionales):
#
# | Tipo de capa | Coste por capa | Operaciones secuenciales | Camino más largo entre dos tokens |
# |---|---|---|---|
# | Autoatención | $O(n^2 \cdot d)$ | $O(1)$ | $O(1)$ |
# | Recurrente | $O(n \cdot d^2)$ | $O(n)$ | $O(n)$ |
# | Convolucional | $O(k \cdot n \cdot d^2)$ | $O(1)$ | $O(n/k)$ con núcleos contiguos; $O(\log_k n)$ con convoluciones dilatadas |
# | Autoatención restringida (cada token mira solo a $r$ vecinos) | $O(r \cdot n \cdot d)$ | $O(1)$ | $O(n/r)$ |
#
# El artículo usa la primera columna a favor de la autoatención: cuando la secuencia es más corta que la dimensión, $n < d$, que es lo habitual al traducir frases, $n^2 d$ es menor que $n d^2$ y una capa de autoatención cuesta **menos** que una recurrente. Con $n = 50$ tokens y $d = 512$, $n^2 d = 1{,}3 \cdot 10^{6}$ operaciones frente a $n d^2 = 1{,}3 \cdot 10^{7}$, diez veces menos. El precio aparece con secuencias más largas que $d$: entonces domina el $n^2$, porque cada token se compara con todos, y para ellas el artículo propone la autoatención restringida de la última fila, que acorta el coste a cambio de alargar el camino.

# %% [raw]
# # BEGIN QUESTION
# name: coste

# %% [markdown]
# **Ejercicio sin nota E: `productos_escalares`.** Generar $n$ tokens uno a uno exige, en cada paso $t = 1, \dots, n$, la atención del token $t$ sobre los $t$ tokens que ya hay. Escribe `productos_escalares(n)`, que devuelva la tupla `(sin_cache, con_cache)`: cuántos productos escalares $q \cdot k$ calcula en total una cabeza para generar $n$ tokens **sin caché**, recalculando en cada paso la atención causal completa del prefijo (sus $t \times t$ puntuaciones: la máscara pone a $-\infty$ las prohibidas, pero después de calcularlas), y **con caché**, una sola consulta contra las $t$ claves. Antes de escribirla, predice cómo crece cada número con $n$: ¿como $n$, como $n^2$ o como $n^3$? Cuenta solo los productos $q \cdot k$: sin caché, cada paso recalcula también las proyecciones $K$ y $V$ de todo el prefijo (y, en un modelo de varias capas, la atención y la FFN de cada posición anterior en cada capa), y la caché también se ahorra todo eso.

# %% [raw]
# # BEGIN SOLUTION

# %%
# BEGIN SOLUTION NO PROMPT
def productos_escalares(n):
    """(sin_cache, con_cache): los productos escalares q·k que calcula una cabeza para generar n tokens."""
    sin_cache = sum(t * t for t in range(1, n + 1))                # el paso t recalcula t × t puntuaciones
    con_cache = sum(t for t in range(1, n + 1))                    # el paso t: una consulta contra t claves
    return sin_cache, con_cache
# END SOLUTION
""" # BEGIN PROMPT
def productos_escalares(n):
    """(sin_cache, con_cache): los productos escalares q·k que calcula una cabeza para generar n tokens."""
    raise NotImplementedError("Escribe productos_escalares: sustituye esta línea por tu código (ejercicio sin nota).")
""" # END PROMPT

# %% [markdown] tags=["solution-note"]
# > **Por qué así.** Sin caché, el paso $t$ calcula $t^2$ puntuaciones, y en total $1 + 4 + \dots + n^2 = n(n + 1)(2n + 1)/6$, que crece como $n^3/3$; con caché, $1 + 2 + \dots + n = n(n + 1)/2$, que crece como $n^2/2$. Con $n = 1000$ son 333 833 500 frente a 500 500, unas 667 veces más. La caché no cambia la fila 1 de la tabla del artículo: la atención de una secuencia sigue costando $O(n^2 \cdot d)$; lo que evita es repetir ese coste en cada token generado.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_coste_cuenta_los_productos_escalares_de_generar(productos_escalares):
    # Los totales, contados al preparar la clase con los dos bucles de generación.
    cuentas = {1: (1, 1), 2: (5, 3), 5: (55, 15), 12: (650, 78), 1000: (333833500, 500500)}
    for n, (sin_cache, con_cache) in cuentas.items():
        try:
            respuesta = productos_escalares(n)
        except NotImplementedError as falta:
            raise AssertionError(f"Todavía no se puede comprobar: {falta}") from None
        assert isinstance(respuesta, tuple) and len(respuesta) == 2, (
            f"productos_escalares debe devolver la tupla (sin_cache, con_cache), y devolvió {respuesta!r}.")
        mia_sin, mia_con = respuesta
        assert (mia_sin, mia_con) != (con_cache, sin_cache) or n == 1, (
            f"Para n = {n} tus dos números están al revés: sin caché se calcula más, no menos.")
        assert mia_con == con_cache, (
            f"Con caché, generar {n} tokens calcula {con_cache} productos escalares y tu función dice {mia_con}: "
            "en el paso t, la consulta del token nuevo se compara con las t claves de la caché, la suya incluida.")
        assert mia_sin == sin_cache, (
            f"Sin caché, generar {n} tokens calcula {sin_cache} productos escalares y tu función dice {mia_sin}: "
            "en el paso t se recalcula la atención causal completa del prefijo, t consultas contra t claves, y eso "
            "en cada uno de los n pasos, no solo en el último.")

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown]
# ### Post-LN y pre-LN
#
# El bloque del paso 8 es **post-LN**, como el del artículo original: la normalización va después de cada suma, $x \leftarrow \text{LayerNorm}(x + \text{Subcapa}(x))$. La mayoría de los modelos grandes actuales, desde GPT-2, usan **pre-LN**, muchos con RMSNorm en lugar de LayerNorm (una normalización que solo divide por la raíz de la media de los cuadrados, sin restar la media): normalizan la entrada de cada subcapa y dejan la suma fuera, $x \leftarrow x + \text{Subcapa}(\text{LayerNorm}(x))$, con una última LayerNorm al final de la pila:
#
# | | Post-LN (paso 8) | Pre-LN |
# |---|---|---|
# | Primera subcapa | $x \leftarrow \text{LayerNorm}(x + \text{MultiHead}(x))$ | $x \leftarrow x + \text{MultiHead}(\text{LayerNorm}(x))$ |
# | Segunda subcapa | $x \leftarrow \text{LayerNorm}(x + \text{FFN}(x))$ | $x \leftarrow x + \text{FFN}(\text{LayerNorm}(x))$ |
#
# Dibujados uno al lado del otro, con sus conexiones residuales en verde, se ve dónde está la diferencia: en post-LN, cada camino residual acaba en una suma que va seguida de una normalización, así que lo que entra en el bloque llega a la salida después de atravesar dos normalizaciones; en pre-LN, las normalizaciones están en las ramas de las subcapas, y el camino residual va de la entrada a la salida pasando solo por sumas.
#
# ![Dos bloques Transformer, uno al lado del otro. A la izquierda, post-LN: entrada, atención multicabeza, suma, normalización de capa, FFN por token, suma, normalización de capa y salida; dos conexiones residuales verdes saltan la atención y la FFN y llegan a las sumas, y la segunda sale después de la primera normalización. A la derecha, pre-LN: entrada, normalización de capa, atención multicabeza, suma, normalización de capa, FFN por token, suma y salida; las dos conexiones residuales verdes saltan cada normalización con su subcapa, y entre ellas solo hay una suma](attachment:post_ln_pre_ln.png)
#
# En pre-LN el camino residual llega intacto de la primera capa a la última, y eso hace más estable entrenar pilas profundas: Xiong et al. (2020, *On Layer Normalization in the Transformer Architecture*) muestran que pre-LN entrena sin el calentamiento de la tasa de aprendizaje que post-LN necesita. El laboratorio de ablación mide la otra cara: sin ningún camino residual, dos bloques ya aprenden peor.

# %% [markdown]
# ## Errores conceptuales frecuentes
#
# | Idea equivocada | Lo que es cierto | Dónde lo ves |
# |---|---|---|
# | «La atención tiene en cuenta el orden de los tokens.» | Sin codificación posicional y sin máscara, permutar los tokens solo permuta las salidas. Con la máscara causal el orden ya cuenta algo, porque cada posición ve solo lo anterior: sin posiciones, la ablación aprende así más de la mitad de la copia desplazada. | Paso 7; y el laboratorio de ablación |
# | «$\sqrt{d_k}$ es un detalle numérico menor.» | Sin escalar, con $d_k$ grande la softmax se satura: la consulta típica apenas recibe gradiente, y unas pocas reciben uno enorme. Con la misma tasa de aprendizaje, el paso es demasiado grande y el entrenamiento se vuelve caótico. | Paso 4: la figura del gradiente; y, entrenando, el laboratorio de ablación |
# | «Cada cabeza tiene un rol interpretable asignado.» | Los roles emergen, o no, del entrenamiento. | Pasos 6 y 9 |
# | «El Transformer procesa los tokens de uno en uno al entrenar.» | Entrena en paralelo sobre toda la secuencia, porque no tiene recurrencia; la máscara causal es lo que hace válido ese entrenamiento. Solo genera de uno en uno. | Paso 5 |
# | «La FFN del bloque mezcla información entre tokens.» | La FFN se aplica a cada token por separado. | Paso 8 |
#
# > **Nota del kit.** Se lee a menudo que el Transformer entrena en paralelo «gracias a la máscara causal». El paralelismo viene de no tener recurrencia: ninguna posición espera a la anterior. La máscara es lo que lo hace válido, porque ninguna posición ve el token que tiene que predecir.

# %% [markdown]
# ## Del aprendizaje a la operación
#
# De esta mecánica a un modelo de lenguaje en producción median varias piezas que esta clase no construye:
#
# - la **tokenización BPE** (*byte-pair encoding*), que parte el texto en subpalabras frecuentes antes de que exista ningún vector;
# - el **preentrenamiento masivo** sobre cantidades enormes de texto (clase 059 y parte 05 de la ruta);
# - la **caché de claves y valores** (*KV-cache*): al generar, las claves y los valores de los tokens ya escritos no cambian, así que se guardan en lugar de recalcularlos con cada token nuevo;
# - la **atención eficiente** (*FlashAttention*), que calcula exactamente la misma atención por bloques, sin guardar nunca entera la matriz de puntuaciones de $n \times n$;
# - la **cuantización**, que guarda los pesos con menos bits para servir el modelo con menos memoria;
# - y el **alineamiento** posterior, que ajusta el modelo preentrenado para que siga instrucciones y evite respuestas dañinas.
#
# La matemática de esta clase, $\text{softmax}(QK^\top / \sqrt{d_k})\,V$, es literalmente la que se ejecuta en un modelo comercial: millones de veces por respuesta (en cada capa, en cada cabeza y para cada token que escribe), y sus productos escalares $q \cdot k$ se cuentan por miles de millones.

# %% [markdown] tags=["graded-only"]
# ## Laboratorio
#
# Hasta aquí, las pruebas comprobaban tus funciones. Ahora vas a usarlas como evidencia: `lab.py` toma **tus** cuatro funciones de este cuaderno, mide con ellas varias propiedades y lo imprime todo como un JSON con `kind`, `seed`, `inputs`, `result`, `evidence` y `limitations`. Las preguntas 3 y 4 y el reto verificable parten de ese resultado.
#
# **Ejecuta el laboratorio** con una semilla explícita. La celda siguiente hace lo mismo que `python lab.py --seed 55` en una terminal abierta en esta carpeta, con las funciones que tienes definidas ahora en el cuaderno. Si una de tus funciones todavía lanza `NotImplementedError` o falla, el laboratorio no mide los hechos que la usan (salen como «no medido», con el motivo) y mide todos los demás: un error te cuesta solo lo que depende de él. `assessment.md` lo explica con detalle.

# %% tags=["graded-only"]
# <kit: lab>

# %% [markdown] tags=["graded-only"]
# **Lee la evidencia.** Cada hecho dice qué se comprobó, si se cumple con tu código y con qué números. Ejecuta la celda dos veces: con la misma semilla, los números no cambian (pregunta 3). Si algo no se cumple, esa es la primera pista para revisar tu función.

# %% [markdown] tags=["graded-only"]
# ## Laboratorio de ablación: qué pasa si quitas una pieza
#
# El paso 9 mostró que un modelo entrenado puede acertar aunque falte $\sqrt{d_k}$: acertar no prueba que cada pieza sirva. Para verlo hay que **entrenar** con y sin ella. `ablacion.py`, en esta carpeta, entrena un Transformer diminuto (su propio código de NumPy, no tus funciones) en la **copia desplazada**, escribir en cada posición el token de la posición anterior, con ocho semillas y, en cada una, desde los mismos parámetros iniciales con la pieza y sin ella:
#
# - **sin dividir por $\sqrt{d_k}$**, con $d_k = 64$;
# - **sin codificación posicional**, en una tarea que solo se resuelve sabiendo qué token es el anterior;
# - **sin conexiones residuales**, en una pila de dos bloques.
#
# Entrena con descenso del gradiente con momento y una tasa de aprendizaje fija, no con Adam: Adam divide cada gradiente por su propio tamaño y disimularía justo lo que estas piezas cambian, el tamaño de los gradientes. Usa un solo hilo del procesador (con matrices tan pequeñas, más hilos solo lo frenan) y tarda unos 20 segundos: 20 s en el ordenador en que se preparó la clase, y el doble o más si el ordenador está ocupado con otras cosas. Mientras entrena, escribe por qué semilla va y, al terminar, cuánto ha tardado. No se ejecuta con el resto del cuaderno: cuando quieras verlo, en una terminal abierta en esta carpeta (con el entorno activado),
#
# ```
# python ablacion.py --figura ablacion.png
# ```
#
# o cambia `False` por `True` en la celda siguiente y ejecútala. Imprime un JSON con el mismo contrato que `lab.py` (`kind`, `evidence` con cada hecho y sus números, `limitations`) y dibuja en `ablacion.png` las curvas de pérdida y el gradiente que llega a $W_Q$ y $W_K$, con la pieza (azul) y sin ella (rojo). Cada hecho compara las ocho semillas una a una, o sus medianas, y dice si se cumple.
#
# **Solo imprime números estables.** Sin la escala, el entrenamiento es caótico: empujar los parámetros iniciales una billonésima ($10^{-12}$) cambia su pérdida final en las ocho semillas (con la escala, en ninguna). Por eso esas pérdidas no se imprimen semilla a semilla, y lo que sí se imprime es cuántas semillas cambian con ese empujón. Todo lo demás da lo mismo con el empujón y con uno o dos hilos, es decir, en cualquier ordenador: compruébalo con `python ablacion.py --perturbacion 1e-12`.
#
# **Sus números también se pueden citar, pero no solos.** No hace falta entrenar para verlos: `lab.py` trae lo que mide `ablacion.py` con sus semillas 0 a 7 en `result.ablacion` (la celda del laboratorio lo muestra al final), medido al preparar la clase, y entrenar otra vez, en tu ordenador, da los mismos números. Se citan diciendo de qué medición salen: «sin dividir por $\sqrt{d_k}$, el gradiente que llega a $W_Q$ y $W_K$ en los 15 primeros pasos con la semilla 0 es 0,883, y con la escala, 0,3608». En el reto no cuentan por sí solos, porque son los mismos para toda la clase y no dicen nada de tu código: cítalos junto a un número medido con tus funciones.

# %% tags=["graded-only"]
EJECUTAR_ABLACION = False  # True para entrenar el modelo diminuto con y sin cada pieza (unos 20 segundos)

if EJECUTAR_ABLACION:
    import json
    import subprocess
    import sys

    import lab

    # Lo mismo que «python ablacion.py --figura ablacion.png» en una terminal, con un solo hilo; su avance sale aquí.
    proceso = subprocess.Popen([sys.executable, "ablacion.py", "--figura", "ablacion.png"], text=True,
                               encoding="utf-8", stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for linea in proceso.stderr:
        print(linea, end="")
    evidencia_ablacion = json.loads(proceso.stdout.read())
    for hecho in evidencia_ablacion["evidence"]:
        print(f"[{'se cumple' if hecho['holds'] else 'NO se cumple'}] {hecho['fact']}")
        for clave, valores in hecho["values"].items():
            valores = valores if isinstance(valores, list) else [valores]
            print(f"    {lab.GLOSSES[clave]}: {', '.join(f'{v:.4g}'.replace('.', ',') for v in valores)}")
    print(f"¿Son los números que lab.py trae en result.ablacion? {'Sí' if evidencia_ablacion == lab.ABLATION else 'No'}")

# %% [markdown] tags=["graded-only"]
# ## Preguntas
#
# Responde en la celda de texto que sigue a cada pregunta. Estas respuestas las corrige una persona con la rúbrica de la clase, cuyos niveles están al final de `assessment.md`, en «Cómo se corrigen las preguntas»: léelos antes de responder.

# %% [raw]
# # BEGIN QUESTION
# name: q1
# manual: true

# %% [markdown]
# **Pregunta 1.** Define la atención y la arquitectura Transformer sin usar una marca o un *framework* como definición.

# %% [raw]
# # BEGIN PROMPT

# %% [markdown]
# _Escribe aquí tu respuesta._

# %% [raw]
# # END PROMPT

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# La atención es una media ponderada de vectores de valor en la que los pesos salen de comparar una consulta con claves (softmax de productos escalares escalados), de modo que cada posición puede leer directamente de cualquier otra. El Transformer es una arquitectura que apila bloques de atención multicabeza y redes feed-forward por token, con conexiones residuales y normalización de capa, y que inyecta el orden mediante una codificación posicional.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q2
# manual: true

# %% [markdown]
# **Pregunta 2.** Explica la relación entre la autoatención (*self-attention*), la atención multicabeza (*multi-head*), la codificación posicional (*positional encoding*) y el Transformer.

# %% [raw]
# # BEGIN PROMPT

# %% [markdown]
# _Escribe aquí tu respuesta._

# %% [raw]
# # END PROMPT

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# La autoatención es la atención en la que $Q$, $K$ y $V$ salen de la misma secuencia. La atención multicabeza ejecuta varias autoatenciones con proyecciones distintas y concatena sus salidas. Como la autoatención es equivariante a permutaciones, la codificación posicional añade el orden. El Transformer apila bloques que combinan multicabeza, FFN, residuales y LayerNorm sobre entradas con codificación posicional.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q3
# manual: true

# %% [markdown]
# **Pregunta 3.** Ejecuta `lab.py` dos veces con la misma semilla. ¿Qué debe conservarse?

# %% [raw]
# # BEGIN PROMPT

# %% [markdown]
# _Escribe aquí tu respuesta._

# %% [raw]
# # END PROMPT

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Todo: con la misma semilla y el mismo cuaderno, las dos ejecuciones deben imprimir un JSON idéntico byte a byte (mismas entradas, mismos números de evidencia, mismas limitaciones), y terminar con código 0. Si algo cambia, hay una fuente de aleatoriedad sin semilla o un estado oculto.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q4
# manual: true

# %% [markdown]
# **Pregunta 4.** Identifica una afirmación permitida y una afirmación exagerada sobre el resultado del laboratorio.

# %% [raw]
# # BEGIN PROMPT

# %% [markdown]
# _Escribe aquí tu respuesta._

# %% [raw]
# # END PROMPT

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Permitida: «con la máscara causal, mi `attention` da peso 0 a los tokens futuros en estas entradas, y las filas suman 1 con un error máximo de $10^{-16}$». Exagerada: «mi implementación es correcta y sirve para un modelo en producción»: el laboratorio comprueba unas pocas propiedades con parámetros aleatorios y matrices pequeñas, sin entrenamiento, sin lotes y sin medir rendimiento.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q5
# manual: true

# %% [markdown]
# **Pregunta 5.** Propón una prueba negativa o un caso límite.

# %% [raw]
# # BEGIN PROMPT

# %% [markdown]
# _Escribe aquí tu respuesta._

# %% [raw]
# # END PROMPT

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Una fila de la máscara sin ninguna clave permitida: todas sus puntuaciones son $-\infty$ y la softmax devuelve NaN. Una prueba negativa comprobaría que esa fila se detecta y se rechaza con un mensaje claro en lugar de propagar NaN. Otro caso límite: puntuaciones del orden de 1000, que hacen desbordar una softmax que no resta el máximo.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown] tags=["graded-only"]
# Las preguntas 6 a 8 son sobre la atención misma: se responden razonando con la fórmula $\text{softmax}(QK^\top/\sqrt{d_k})\,V$, y puedes comprobar tu razonamiento ejecutando `attention`.

# %% [raw]
# # BEGIN QUESTION
# name: q6
# manual: true

# %% [markdown]
# **Pregunta 6.** Sin ejecutar nada, predice qué les pasa a los pesos de atención si (a) sumas el mismo vector $c$ a todas las claves, (b) multiplicas todas las claves por 10 y (c) aplicas la máscara causal *después* de la softmax, poniendo a 0 los pesos de las claves futuras en lugar de poner $-\infty$ en sus puntuaciones. Justifica cada respuesta con la fórmula, y compruébalo después ejecutando `attention`.

# %% [raw]
# # BEGIN PROMPT

# %% [markdown]
# _Escribe aquí tu respuesta._

# %% [raw]
# # END PROMPT

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# (a) No cambian. Las puntuaciones de la consulta $q$ pasan de $q \cdot k_j/\sqrt{d_k}$ a $(q \cdot k_j + q \cdot c)/\sqrt{d_k}$: se les suma la misma cantidad, $q \cdot c/\sqrt{d_k}$, a todas las de esa fila, y la softmax no cambia si se suma una constante a toda la fila (se cancela al dividir por la suma). (b) Se concentran: todas las puntuaciones se multiplican por 10, y la softmax amplifica las diferencias, así que el peso de la clave más parecida se acerca a 1 y el resto a 0. Es el mismo efecto que no dividir por $\sqrt{d_k}$ con $d_k$ grande (paso 4). (c) Las filas dejan de sumar 1: cada consulta conserva los pesos que la softmax dio a sus claves permitidas, calculados repartiendo 1 también entre las futuras, así que su suma es menor que 1 (en la primera fila, solo el peso de sí misma) y la salida encoge hacia 0, más cuanto antes está el token. Las proporciones entre las claves permitidas sí son las correctas: dividir cada fila por su nueva suma da exactamente los pesos de poner $-\infty$ antes de la softmax.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q7
# manual: true

# %% [markdown]
# **Pregunta 7.** Construye una cabeza que atienda al token *anterior*. Toma como entradas solo las codificaciones posicionales, $x_i = PE(i)$ con $d_{\text{model}}$ par, y elige $W^Q$ y $W^K$ (con $d_k = d_{\text{model}}$) para que la mayor puntuación de la consulta $i$ sea la de la clave $i - 1$. Pista: el laboratorio comprueba que $PE(pos + k)$ es una rotación de $PE(pos)$, la misma en todas las posiciones. Explica con la fórmula de las puntuaciones por qué funciona, compruébalo con tu `attention` y tu `positional_encoding`, y di qué pasa con el primer token y qué cambia si a cada $x_i$ se le suma el *embedding* de su palabra.

# %% [raw]
# # BEGIN PROMPT

# %% [markdown]
# _Escribe aquí tu respuesta._

# %% [raw]
# # END PROMPT

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Cada pareja de columnas de $PE(i)$ es $(\sin \omega p, \cos \omega p)$ con $p = i$; retroceder una posición es girar cada pareja un ángulo $-\omega$, así que existe una matriz ortogonal $R$ (diagonal por bloques de $2 \times 2$, un giro por frecuencia) con $PE(i - 1) = PE(i)\,R$ para todo $i$. Con $W^Q = \lambda R$ y $W^K = \lambda I$, la puntuación es $\lambda^2\, PE(i-1) \cdot PE(j)/\sqrt{d_k}$. Todas las filas de $PE$ tienen la misma norma, $\sqrt{d_{\text{model}}/2}$ (cada pareja aporta $\sin^2 + \cos^2 = 1$), así que por Cauchy-Schwarz la mayor puntuación de la fila $i$ es la de $j = i - 1$, la única posición cuyo vector coincide con $PE(i-1)$; con $\lambda$ grande la softmax pone ahí casi todo el peso. La máscara causal permite $j = i - 1$, así que no estorba. El primer token no tiene anterior. Con la máscara causal solo ve su propia clave, así que su peso sobre sí mismo es exactamente 1. Sin máscara, su puntuación mayor es la de la clave más parecida a $PE(-1)$, que no tiene por qué ser la suya: con 12 posiciones y $d_{\text{model}} = 16$ lo es, pero con $d_{\text{model}} = 8$ es la de la posición 5, porque la frecuencia más rápida, $\omega = 1$, da una vuelta cada $2\pi \approx 6{,}3$ posiciones, y la posición 5 está casi una vuelta por delante de $-1$. Comprobado con `attention` y `positional_encoding` ($\lambda = 3$, 12 posiciones): con $d_{\text{model}} = 16$ y con 8, la mayor puntuación de cada consulta $i \geq 1$ es la de la clave $i - 1$, con máscara y sin ella. Con *embeddings* sumados aparecen términos cruzados $e_i R \cdot e_j$ que pueden ganar a la posición: funciona si los *embeddings* son pequeños frente a $\lambda$ o viven en otras columnas, que es lo que un modelo entrenado aprende a hacer.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% tags=["graded-only"]
# Pregunta 7: comprueba aquí tu construcción con tu attention y tu positional_encoding. Por ejemplo:
# n, d_model, lam = 12, 16, 3.0
# pe, omega = positional_encoding(n, d_model)
# W_Q7, W_K7 = ..., ...                              # tu construcción
# _, pesos7 = attention(pe @ W_Q7, pe @ W_K7, pe)    # prueba también con mask=np.tril(np.ones((n, n), dtype=bool))
# print(pesos7.argmax(axis=1))                       # la clave que más pesa para cada consulta

# %% [raw]
# # BEGIN QUESTION
# name: q8
# manual: true

# %% [markdown]
# **Pregunta 8.** Demuestra que la autoatención sin máscara y sin codificación posicional es equivariante a las permutaciones: si $P$ es una matriz de permutación, la salida para $PX$ es $P$ por la salida para $X$. ¿Qué paso de tu demostración deja de valer con la máscara causal?

# %% [raw]
# # BEGIN PROMPT

# %% [markdown]
# _Escribe aquí tu respuesta._

# %% [raw]
# # END PROMPT

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# Con $X' = PX$: $Q' = PQ$, $K' = PK$ y $V' = PV$. Las puntuaciones son $Q'K'^\top/\sqrt{d_k} = P\,(QK^\top/\sqrt{d_k})\,P^\top$: las mismas, con filas y columnas permutadas igual. La softmax por filas conmuta con eso: permutar las filas solo las reordena, y permutar las columnas de una fila solo reordena sus términos, que suman lo mismo; así que los pesos son $A' = P A P^\top$. La salida es $A'V' = P A P^\top P V = P\,(A V)$, porque $P^\top P = I$. Con la máscara causal, las puntuaciones son $P S P^\top + M$ y no $P\,(S + M)\,P^\top$: la máscara $M$ no se permuta con los tokens (sigue siendo triangular), y ese paso falla.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [raw]
# # BEGIN QUESTION
# name: q9
# manual: true

# %% [markdown]
# **Pregunta 9.** El modelo entrenado del paso 9 acierta los 1600 dígitos de prueba aunque quites la escala $1/\sqrt{d_k}$ de tu `attention`. (a) ¿Por qué eso no demuestra que la escala sobre? (b) Ejecuta el laboratorio de ablación (`python ablacion.py`): en su hecho `sin_escala_raiz_dk`, sin la escala y con $d_k = 64$, el gradiente que llega a $W_Q$ y $W_K$ en los primeros pasos es mayor, no menor, aunque la softmax esté más saturada. ¿Por qué? Usa los dos factores de $\partial L / \partial q$ del paso 4, di qué consultas reciben ese gradiente mayor y por qué eso empeora el entrenamiento con la misma tasa de aprendizaje, citando los números de la ablación.

# %% [raw]
# # BEGIN PROMPT

# %% [markdown]
# _Escribe aquí tu respuesta._

# %% [raw]
# # END PROMPT

# %% [raw]
# # BEGIN SOLUTION

# %% [markdown]
# (a) Quitar la escala multiplica todas las puntuaciones de una fila por el mismo número positivo, $\sqrt{d_k}$: su orden no cambia, así que la clave con más peso sigue siendo la misma y la softmax solo se afila. Las cabezas del modelo entrenado ya son casi duras (casi todo el peso de cada consulta va a una clave), así que afilarlas más no cambia qué clave eligen ni la predicción. Acertar con parámetros ya entrenados es una condición necesaria, no suficiente: no dice nada de lo que la escala hace **al entrenar**. (b) Con $s = c\,Kq$, el gradiente que llega a la consulta es $\partial L/\partial q = c\,K^\top\,\partial L/\partial s$, y quitar la escala cambia sus dos factores. Por un lado, $c$ pasa de $1/\sqrt{d_k}$ a 1: cada cambio de $q$ mueve las puntuaciones $\sqrt{d_k}$ veces más, 8 veces con $d_k = 64$. Por otro, la softmax se afila, y su derivada, $\partial L/\partial s_j = w_j\,(u_j - \sum_i w_i u_i)$, se anula en las consultas en que un peso vale casi 1. En la consulta típica gana la saturación: en el paso 4, su gradiente cae a 0,021 con $d_k = 256$, frente a 0,3 escalando. Pero en las consultas con dos claves casi empatadas en cabeza la softmax no está saturada, y ahí gana el factor $\sqrt{d_k}$: reciben un gradiente mucho mayor. El gradiente de $W_Q$ y $W_K$ suma el de todas las consultas, así que lo dominan esas pocas: en el paso 4 la media es 3,1 veces la de escalando con $d_k = 64$, y en la ablación el gradiente de los 15 primeros pasos es mayor en las ocho semillas (0,883 frente a 0,3608 con la semilla 0); la softmax empieza más afilada (mayor peso medio antes de entrenar: 0,9293 frente a 0,592). Con la misma tasa de aprendizaje, cada paso mueve los pesos mucho más y de forma irregular, según qué consultas estén empatadas en cada lote: el entrenamiento se vuelve caótico (un empujón de $10^{-12}$ a los parámetros iniciales cambia la pérdida final en 8 de 8 semillas sin la escala y en 0 de 8 con ella) y acaba peor (su pérdida mediana es más del doble de la de con la escala, 0,02098). El límite es el del laboratorio: un modelo diminuto, entrenado con SGD, una tasa y 150 pasos.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # END QUESTION

# %% [markdown] tags=["graded-only"]
# ## Reto verificable
#
# Tu trabajo es ampliar el resultado del laboratorio, `resultado_lab`, con una clave `student_extension` que interprete los datos sin ir más allá de ellos. Las reglas completas, con los cinco criterios de aceptación, están en `assessment.md`.
#
# **Un solo camino.** Todo el reto se hace en este cuaderno: aquí escribes `student_extension`, y la celda de «Guarda y valida», al final del reto, escribe `resultado.json` por ti (y lo **sobrescribe** cada vez que la ejecutas, así que no lo edites a mano). Lo que se califica al entregar es la `student_extension` de este cuaderno. En una terminal puedes ejecutar lo mismo para verlo con tus ojos, `python lab.py --seed 55` y `python extension.py resultado.json`, pero no hace falta.

# %% [raw]
# # BEGIN QUESTION
# name: student_extension

# %% [markdown]
# **Reto: `student_extension`.** Completa los cinco textos. Las claves del contrato también tienen nombre en inglés (`assumption`, `measurement`, `conclusion`, `limitation`, `risk`); puedes usar cualquiera de los dos, pero no los dos a la vez.
#
# - `supuesto`: el supuesto que pones a prueba.
# - `medicion`: la medición o comprobación, **citando al menos un número medido con tus funciones**, de `evidence` o `result` tal como lo imprimió `lab.py`, y **diciendo de qué medición sale**, con al menos dos palabras suyas («en el ejemplo resuelto, el peso de la fila 1 sobre su propia clave es 0,6698»). Puedes redondearlo (0,123456 → «0,12»), escribirlo con coma decimal o como porcentaje («12 %»).
# - `conclusion`: lo que concluyes, sin ir más allá de los datos.
# - `limitacion`: un límite de tu medición.
# - `riesgo`: un riesgo o una condición en la que **no** usarías este resultado. «Ninguno» no vale.
#
# No cambies nada de `resultado_lab`: la extensión añade, nunca edita. Al entregar, cada criterio se comprueba por separado y suma sus propios puntos, pero todos necesitan el primero: que `lab.py` mida con tus funciones al menos un hecho que se cumpla, con funciones que cumplan todo lo que el laboratorio comprueba de ellas. Sin funciones que funcionen, el reto no suma nada. La prueba pública de `grader.check("student_extension")` solo mira la forma (cinco textos rellenos), nunca si cumplen los criterios: eso lo dice el validador, en la celda de «Guarda y valida».

# %% [raw]
# # BEGIN SOLUTION

# %%
# BEGIN SOLUTION NO PROMPT
student_extension = {
    "supuesto": "Mi attention reparte el peso de cada consulta según su afinidad con cada clave, y la máscara causal anula el futuro.",
    "medicion": "En el ejemplo resuelto de result, los pesos de la fila 1 son 0,6698 y 0,3302; con la máscara causal, la salida de la fila 1 es exactamente (1, 2).",
    "conclusion": "El token 1 pone un 67 % de su atención en su propia clave, como predice el ejemplo resuelto del paso 3, y con la máscara no ve el token 2.",
    "limitacion": "Son dos tokens con proyecciones dadas a mano: no prueba n ≠ m, d_k ≠ d_v ni máscaras arbitrarias.",
    "riesgo": "No usaría estos pesos de atención para explicar por qué un modelo real atiende a una palabra: sin entrenamiento no significan nada.",
}
# END SOLUTION
""" # BEGIN PROMPT
# Sustituye cada None por tu texto, entre comillas.
student_extension = {
    "supuesto": None,
    "medicion": None,
    "conclusion": None,
    "limitacion": None,
    "riesgo": None,
}
""" # END PROMPT
resultado = {**resultado_lab, "student_extension": student_extension}


# %% [markdown] tags=["solution-note"]
# > **Por qué cumple los cinco criterios.** No edita nada de lo que imprimió `lab.py`: solo añade `student_extension` (criterios 1 a 3). Cita números de `result.worked_example`, que son los mismos con cualquier semilla y se pueden comprobar a mano con el ejemplo resuelto (criterio 4). Declara un riesgo concreto, no «ninguno» (criterio 5). Y la conclusión no va más allá de los datos: habla de dos tokens y de parámetros sin entrenar, no de modelos reales. Una respuesta de estudiante puede citar cualquier otro número del laboratorio, por ejemplo el mayor peso medio sin escalar con $d_k = 512$.

# %% [raw]
# # END SOLUTION

# %% [raw]
# # BEGIN TESTS

# %%
""" # BEGIN TEST CONFIG
points: 0
""" # END TEST CONFIG
def test_student_extension_tiene_cinco_textos_rellenos(student_extension):
    fields = [("supuesto", "assumption"), ("medicion", "medición", "measurement"), ("conclusion", "conclusión"),
              ("limitacion", "limitación", "limitation"), ("riesgo", "risk")]
    assert isinstance(student_extension, dict), "student_extension debe ser un diccionario {...} con tus cinco textos"
    for names in fields:
        present = [name for name in names if name in student_extension]
        assert len(present) == 1, f"student_extension necesita una sola clave «{names[0]}» (o «{names[-1]}»), y tiene {len(present)}"
        text = student_extension[present[0]]
        assert isinstance(text, str) and text.strip(), f"«{present[0]}» está sin rellenar: escribe tu texto entre comillas"

# %% [raw]
# # END TESTS

# %% [raw]
# # END QUESTION

# %% [markdown] tags=["graded-only"]
# **Guarda y valida.** La celda siguiente escribe `resultado.json` junto a este cuaderno y ejecuta el validador, lo mismo que `python extension.py resultado.json` en una terminal. El validador vuelve a ejecutar `lab.py`, comprueba los cinco criterios y escribe una línea por cada uno que falle, con qué corregir. Repite hasta leer «5 de 5 criterios se cumplen».

# %% tags=["graded-only"]
# <kit: validate>

# %% [markdown]
# ## Conclusión
#
# - Las redes recurrentes pasan la información de token en token, y su influencia se desvanece exponencialmente con la distancia. La atención conecta cada token con todos los demás en un solo paso.
# - La atención por producto escalar con escala compara las consultas con las claves, convierte las puntuaciones en pesos con softmax y mezcla los valores con esos pesos. Dividir por $\sqrt{d_k}$ evita que la softmax se sature y que el gradiente se concentre en unas pocas consultas.
# - La máscara causal impide que un token mire al futuro: es lo que permite a un modelo generar texto de izquierda a derecha, y lo que hace válido entrenarlo en paralelo sobre toda la secuencia, algo posible porque no hay recurrencia. La atención multicabeza calcula varias nociones de relevancia en paralelo.
# - La atención es ciega al orden, así que el Transformer añade una codificación posicional, cuyos senos y cosenos convierten un desplazamiento de $k$ posiciones en una rotación.
# - Un bloque Transformer añade una red feed-forward, conexiones residuales y normalización de capa. Hasta el paso 8 todo tiene parámetros aleatorios; en el paso 9, el mismo bloque con parámetros entrenados resuelve una tarea, y sus cabezas acaban con un papel que nadie les asignó. El entrenamiento con cantidades enormes de texto es lo que convierte esta maquinaria en un modelo de lenguaje.
#
# La sección 5 del [explorador interactivo](explorer.html#capital) recorre los ocho pasos de una predicción completa («La capital de ___ es …») con números que puedes cambiar.
#
# ## Referencias
#
# - Vaswani, A. et al. (2017). *Attention Is All You Need*. arXiv:1706.03762. La fuente primaria del Transformer, de la atención escalada y de la codificación sinusoidal.
# - Bahdanau, D., Cho, K. y Bengio, Y. (2014). *Neural Machine Translation by Jointly Learning to Align and Translate*. arXiv:1409.0473. La atención nace aquí, como complemento de una red recurrente.
# - Devlin, J. et al. (2018). *BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding*. arXiv:1810.04805. Un Transformer sin máscara causal, preentrenado a gran escala.
# - Rush, A. et al. *The Annotated Transformer*. nlp.seas.harvard.edu/annotated-transformer. El artículo de Vaswani et al. implementado y comentado línea a línea.
# - Jurafsky, D. y Martin, J. H. *Speech and Language Processing* (3.ª ed., borrador), capítulo sobre Transformers. web.stanford.edu/~jurafsky/slp3. El tema desarrollado con más espacio.

# %% [markdown]
# ## Preguntas frecuentes
#
# **¿Necesito una API comercial?** No. Todo funciona en tu ordenador, con NumPy y sin conexión.
#
# **¿El laboratorio representa una implementación industrial?** No por sí solo. Enseña el contrato (una semilla explícita, evidencia que se puede inspeccionar, limitaciones declaradas) y el patrón; un sistema en producción exige además integración, seguridad, observabilidad, pruebas y operación.
#
# **¿Dónde profundizo?** En las referencias de arriba: *The Annotated Transformer* implementa el artículo línea a línea, y el capítulo de Jurafsky y Martin desarrolla el tema con más espacio. La sección «Del aprendizaje a la operación» dice qué falta para llegar a un modelo en producción.
#
# ## La ruta
#
# - **Clase anterior:** 054 — RNN, LSTM y secuencias. El paso 2 resume el muro con que chocaron.
# - **Clase siguiente:** 056 — Graph Neural Networks, las redes neuronales de grafos.

# %% [markdown] tags=["graded-only"]
# ## Entrega
#
# 1. Guarda el cuaderno (Ctrl+S): el `.zip` lleva el archivo **guardado**, no lo que ves en pantalla.
# 2. Ejecuta la celda siguiente. Crea un archivo `.zip` con tu cuaderno, comprueba que es el de esta tarea y te da un enlace para descargarlo.
# 3. Sube ese `.zip` donde entregas las tareas de la asignatura (Gradescope, Moodle, Canvas: la que use tu curso). Si después cambias algo, guarda y vuelve a ejecutar la celda: crea un `.zip` nuevo, con la fecha y la hora en el nombre, y borra los anteriores de este cuaderno, para que en la carpeta quede solo el que tienes que subir.

# %% deletable=false editable=false tags=["graded-only"]
# <kit: export>
