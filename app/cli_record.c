/*
 * cli_record.c: how the commands record what they computed.
 *
 * Every command that computes an answer records it (data/db.h) after
 * printing it, unless --no-record or $SMDPLAN_NO_RECORD says not to. The
 * record is a convenience, the answer is the point: a database that cannot
 * be written (read-only, full disk, corrupt, newer schema, locked past the
 * busy timeout) costs only the record, with one line on stderr, and never
 * changes the exit code.
 */
#include <stdio.h>

#include "app/cli_int.h"
#include "exec/exec.h"

static int saved_argc;
static char **saved_argv;

void cli_record_args(int argc, char **argv)
{
    saved_argc = argc;
    saved_argv = argv;
}

int cli_record(const char *db_path, int no_record, cli_record_fn fn, void *ctx)
{
    if (no_record || db_record_disabled())
        return 0;
    db_provenance prov;
    char *fallback[] = {(char *)"smdplan"};
    if (saved_argv)
        db_provenance_fill(&prov, saved_argc, saved_argv, exec_features_str());
    else
        db_provenance_fill(&prov, 1, fallback, exec_features_str());
    st_err err = {0};
    db *d = NULL;
    int rc = db_open(db_default_path(db_path), DB_OPEN_WRITE, &d, &err);
    if (rc == ST_OK)
        rc = fn(d, &prov, ctx, &err);
    db_close(d);
    if (rc != ST_OK) {
        fflush(stdout);
        fprintf(stderr, "smdplan: warning: not recorded: %s\n",
                err.msg[0] ? err.msg : st_str(err.code));
        return 0;
    }
    return 1;
}
