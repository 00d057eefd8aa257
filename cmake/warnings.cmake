# SPDX-License-Identifier: Apache-2.0
# trialstat_set_warnings(target): the warning flags every first-party C++ target uses.
function(trialstat_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
      -Wno-missing-field-initializers>)
endfunction()
