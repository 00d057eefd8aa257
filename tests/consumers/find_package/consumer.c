/* SPDX-License-Identifier: Apache-2.0 */
/* C API consumer: open a trial and list what it holds.
 *   consumer_c TRIAL   (prints "trialstat <version>: tensors N workers W"; exit 0 on success) */
#include <stdio.h>

#include <trialstat/trialstat.h>

int main(int argc, char** argv) {
  trialstat_trial* trial = NULL;
  if (argc != 2) {
    fprintf(stderr, "usage: consumer_c TRIAL\n");
    return 2;
  }
  if (trialstat_open(argv[1], &trial) != TRIALSTAT_OK) {
    fprintf(stderr, "%s\n", trialstat_last_error_message());
    return 1;
  }
  printf("trialstat %s: tensors %zu workers %zu\n", trialstat_version(),
         trialstat_num_tensors(trial), trialstat_num_workers(trial));
  trialstat_close(trial);
  return 0;
}
