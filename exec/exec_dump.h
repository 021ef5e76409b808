/*
 * exec_dump.h: the test mode's weight dumps (exec_config.dump_dir): after
 * the last step every rank writes the parameters it owns as runs of the
 * global tensors' flat order (exec_model.h), so a model trained on any
 * layout can be put back together and compared with another.
 *
 * File DIR/weights-rank-NNNNN.bin: "SMDWGT1\0", int64 total (the model's
 * global parameter count), then records {int64 offset, int64 count, count
 * doubles}. Owned: data-parallel rank 0's replica (ZeRO-3 gathers it), TP
 * rank 0's copy of a tensor every TP rank holds, not the tied embedding's
 * copy on the last stage.
 */
#ifndef SMD_EXEC_DUMP_H
#define SMD_EXEC_DUMP_H

#include <stdint.h>

#include "common/st.h"

/* Read every weights-rank-*.bin in dir into the whole model (*out, n
 * doubles, malloc'd). ST_EPARSE for a malformed file; ST_EINVAL when an
 * element is written twice or never. */
int exec_dump_read(const char *dir, double **out, int64_t *n, st_err *err);

#endif
