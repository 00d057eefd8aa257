# SPDX-License-Identifier: Apache-2.0
# BokehJS for `trialstat report` (host/report/html_report_assets.cpp embeds it with .incbin):
# taken from the `bokeh` PyPI package (tools/python/requirements-report.txt, installed with
# --no-deps into .venv by scripts/setup.sh: only its static JS is used, never its Python).
# TRIALSTAT_BOKEHJS_DIR overrides the search (a folder holding bokeh.min.js, bokeh-api.min.js and
# LICENSE.txt). Without it the build still succeeds and `trialstat report` says how to get it.
set(TRIALSTAT_BOKEHJS_DIR "" CACHE PATH "Folder with bokeh.min.js, bokeh-api.min.js, LICENSE.txt")
set(_bokeh_dir "${TRIALSTAT_BOKEHJS_DIR}")
if(NOT _bokeh_dir)
  set(_pythons)
  if(Python_EXECUTABLE)
    list(APPEND _pythons "${Python_EXECUTABLE}")
  endif()
  list(APPEND _pythons "${PROJECT_SOURCE_DIR}/.venv/bin/python" python3)
  foreach(_py IN LISTS _pythons)
    execute_process(
      COMMAND "${_py}" -c "import importlib.util, os; s = importlib.util.find_spec('bokeh'); print(os.path.dirname(s.origin) if s else '')"
      OUTPUT_VARIABLE _bokeh_pkg OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _rc)
    if(_rc EQUAL 0 AND _bokeh_pkg AND EXISTS "${_bokeh_pkg}/server/static/js/bokeh.min.js")
      set(_bokeh_dir "${_bokeh_pkg}/server/static/js")
      set(_bokeh_license "${_bokeh_pkg}/LICENSE.txt")
      execute_process(COMMAND "${_py}" -c "import importlib.metadata as m; print(m.version('bokeh'))"
                      OUTPUT_VARIABLE _bokeh_version OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      break()
    endif()
  endforeach()
else()
  set(_bokeh_license "${_bokeh_dir}/LICENSE.txt")
  set(_bokeh_version "unknown")
endif()
set(TRIALSTAT_HAVE_BOKEHJS OFF)
if(_bokeh_dir AND EXISTS "${_bokeh_dir}/bokeh.min.js" AND EXISTS "${_bokeh_dir}/bokeh-api.min.js"
   AND EXISTS "${_bokeh_license}")
  set(TRIALSTAT_HAVE_BOKEHJS ON)
  set(TRIALSTAT_BOKEH_JS "${_bokeh_dir}/bokeh.min.js")
  set(TRIALSTAT_BOKEH_API_JS "${_bokeh_dir}/bokeh-api.min.js")
  set(TRIALSTAT_BOKEH_LICENSE "${_bokeh_license}")
  set(TRIALSTAT_BOKEH_VERSION "${_bokeh_version}")
  # Hashes in the generated header: a changed bundle changes the compiled source (ccache).
  file(SHA256 "${TRIALSTAT_BOKEH_JS}" TRIALSTAT_BOKEH_JS_SHA256)
  file(SHA256 "${TRIALSTAT_BOKEH_API_JS}" TRIALSTAT_BOKEH_API_JS_SHA256)
  message(STATUS "trialstat report: BokehJS ${_bokeh_version} from ${_bokeh_dir}")
else()
  message(STATUS "trialstat report: BokehJS not found (pip install --no-deps -r tools/python/requirements-report.txt); `trialstat report` disabled")
endif()
