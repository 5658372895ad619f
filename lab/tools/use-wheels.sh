# Sourced by lab/tools/gpu-check and lab/tools/gpu-campaign. A Python without the nbdev that settings.ini pins (the GPU image)
# gets the wheels of .whl/ (lab/tools/gpu-wheels: what the image lacks), installed into /tmp/site once per machine, for
# every call while the machine stays warm; a Python with it (the README's set-up, at home) keeps its own packages. The
# stamp lists the wheels, so changed ones are installed again.
NBDEV_PIN=$(sed -n 's/^dev_requirements *=.*nbdev==\([0-9.]*\).*/\1/p' settings.ini)
if ! python3 -c 'import sys, importlib.metadata as m; sys.exit(m.version("nbdev") != sys.argv[1])' "$NBDEV_PIN" 2> /dev/null; then
  if compgen -G ".whl/*.whl" > /dev/null && [ "$(cat /tmp/site/.horde-wheels 2> /dev/null)" != "$(ls .whl)" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
      && ls .whl > /tmp/site/.horde-wheels || exit 1
  fi
  if [ -e /tmp/site/.horde-wheels ]; then export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"; fi
fi
