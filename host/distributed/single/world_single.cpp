// SPDX-License-Identifier: Apache-2.0
// The world of a build without MPI: always one process (N copies started by an MPI launcher would
// each run the whole job and write it N times, so that case is refused).
#include "host/distributed/common/single_world.hpp"

namespace trialstat::distributed {

process_world& world() {
  static single_world w;
  return w;
}

}  // namespace trialstat::distributed
