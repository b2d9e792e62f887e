"""Files physid reads and writes besides recordings: settings and results.

:mod:`.io` — text, YAML and JSON reading with one-line errors, atomic writes, output folders;
:mod:`.output_paths` — output paths checked before any work; :mod:`.config` and
:mod:`.config_template` — the identification config and its generated template;
:mod:`.params_file` — ``params.json``, the identified parameters.
"""
