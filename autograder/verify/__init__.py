"""Grades that cannot be gamed: verify the graded functions outside the student's kernel.

Step 3 of grading (load → execute with limits → **verify** → diagnose → write). Otter runs its
tests inside the student's own kernel, where the student's code can reach them; here the
grading process decides instead, from processes the student's code never touched:

* ``plugin``       the Otter plugin (Gradescope, ``otter run``, ``otter grade``), listed in the
                   master's ASSIGNMENT CONFIG; ``make_grade`` is the same for `make grade`'s hook;
* ``decide``       the final results: verification for graded questions, flags for the rest;
* ``verifier``     runs the children and replays their outputs through the zip's hidden tests;
* ``extraction``   what a child receives: the submission's definitions, the reference's
                   dependencies (notebook_code does the selecting);
* ``sandbox``      starts a child and reads its reply; ``child`` and ``data_child`` are the
                   programs, ``jail`` confines them (limits, identity, Landlock);
* ``policy``       the static policy (``ast``) behind the ``política`` flags; ``flags`` words them;
* ``kernel``, ``kernel_launcher``, ``views``, ``kernel_data``, ``privileges``: the student's
                   kernel, confined when the grader is root;
* ``otter_hardening``  the places where Otter trusted its kernel, closed.
"""
