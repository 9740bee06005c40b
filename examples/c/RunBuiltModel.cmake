# cmake -DDSCC=... -DRUN_MODEL=... -DSOURCE=FILE.dsc -DOUT=DIR -DFUNCTION=NAME -DSHAPE=B=2,S=7
#       -DREGEX=... -P RunBuiltModel.cmake
# Builds SOURCE with `dscc build`, runs it through the C example, and passes when the run
# succeeds and its stdout matches REGEX.
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${DSCC} build ${SOURCE} -o ${OUT}/model.so -q
  RESULT_VARIABLE status ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "dscc build failed (${status}):\n${err}")
endif()
execute_process(COMMAND ${RUN_MODEL} ${OUT}/model.so ${FUNCTION} ${SHAPE}
  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "run_model failed (${status}):\n${out}${err}")
endif()
if(NOT out MATCHES "${REGEX}")
  message(FATAL_ERROR "stdout does not match '${REGEX}':\n${out}")
endif()
message(STATUS "${out}")
