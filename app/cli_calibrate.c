/*
 * cli_calibrate.c: `smdplan calibrate FILE.csv`: fit each GPU type's
 * efficiency parameters to the measured runs of a calibration CSV (the
 * format of data/reference/calibration_runs.csv) and print them with the
 * error before and after; --write FILE saves them as a catalog override that
 * --catalog FILE applies. It starts from data/catalog.json without the
 * shipped calibration (data/calibration.json, which every other command
 * merges over the catalog), so `smdplan calibrate data/reference/
 * calibration_runs.csv --write data/calibration.json --force` remakes that
 * file (an existing file is replaced only with --force: common/outfile.h).
 *
 * `smdplan calibrate --runs` fits the same way to the executor's own runs
 * recorded in the database (smdplan exec): each run that ended "ok" with a
 * measured step and was predicted when it ran (its plan names a catalog
 * entry) becomes a row of plan_calibrate_results with exactly the model,
 * layout and node it ran (its record's), its measured median step as the
 * reference and its model shape as its source (leave-one-source-out then
 * predicts each shape from the others). Only the framework's efficiencies
 * are fitted (plan_cal_options.keep_chips): the chip's own values stay
 * those smdplan bench measured (a CPU host) or the published runs' pools
 * gave (a GPU), so the override --write makes holds one "efficiencies"
 * entry per (framework, chip) and changes nothing else. It starts from
 * the catalog as every command loads it (with the shipped calibration)
 * and the --catalog files (in order).
 */
#include "app/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "app/cli_int.h"
#include "common/outfile.h"
#include "data/data_known_models.h"
#include "data/data.h"
#include "data/data_calibration.h"
#include "data/data_csv.h"
#include "planner/plan_cal_summary.h"
#include "planner/plan_calibrate.h"
#include "planner/plan_framework.h"
#include "planner/plan_measured.h"
#include "reports/rpt_cal.h"

enum { O_HELP = 'h', O_CATALOG = 256, O_GPU, O_FRAMEWORK, O_FIT, O_WRITE, O_NO_LOSO, O_NO_RECORD,
       O_DB, O_RUNS, O_FORCE, O_WRITE_BANDS };

static const struct option long_opts[] = {
    {"catalog", 1, NULL, O_CATALOG},   {"gpu", 1, NULL, O_GPU},
    {"framework", 1, NULL, O_FRAMEWORK}, {"fit", 1, NULL, O_FIT},
    {"write", 1, NULL, O_WRITE},       {"no-loso", 0, NULL, O_NO_LOSO},
    {"no-record", 0, NULL, O_NO_RECORD}, {"db", 1, NULL, O_DB},
    {"runs", 0, NULL, O_RUNS},         {"force", 0, NULL, O_FORCE},
    {"help", 0, NULL, O_HELP},         {"write-bands", 1, NULL, O_WRITE_BANDS},
    {NULL, 0, NULL, 0},
};

/* What smdplan calibrate (FILE.csv or --runs) was asked. */
typedef struct cal_args {
    const char *catalogs[CLI_CATALOGS_MAX];
    int ncat;
    const char *write, *db_path;
    int force;                   /* --force: --write may replace an existing file */
    const char *write_bands;     /* --write-bands FILE: the error bands (data/error_bands.json) */
    int no_record;
    plan_cal_options opt;
    int runs;                    /* --runs: the executed runs in the database */
    const char *file;            /* FILE.csv (not with --runs) */
} cal_args;

static void usage(FILE *f);
static void runs_usage(FILE *f);

/* Parse both forms of the command; 0 to go on, else the exit code (the
 * help printed, or one line on stderr for bad input). */
static int parse_args(int argc, char **argv, int runs, cal_args *a)
{
    const char *cmd = runs ? "calibrate --runs" : "calibrate";
    memset(a, 0, sizeof *a);
    a->runs = runs;
    a->opt.loso = 1;
    a->opt.keep_chips = runs; /* runs fit the executor's own: the chips' values stay */
    st_err err = {0};
    optind = 1;
    opterr = 0;
    int id;
    while ((id = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        switch (id) {
        case O_RUNS: break;
        case O_HELP:
            (runs ? runs_usage : usage)(stdout);
            return -1;
        case O_CATALOG:
            if (a->ncat == CLI_CATALOGS_MAX) {
                fprintf(stderr, "smdplan: calibrate: --catalog %s: at most %d catalog files\n",
                        optarg, CLI_CATALOGS_MAX);
                return 2;
            }
            a->catalogs[a->ncat++] = optarg;
            break;
        case O_GPU: a->opt.silicon = optarg; break;
        case O_FRAMEWORK: a->opt.framework = optarg; break;
        case O_WRITE: a->write = optarg; break;
        case O_FORCE: a->force = 1; break;
        case O_WRITE_BANDS: a->write_bands = optarg; break;
        case O_NO_LOSO: a->opt.loso = 0; break;
        case O_NO_RECORD: a->no_record = 1; break;
        case O_DB: a->db_path = optarg; break;
        case O_FIT:
            if (plan_cal_params_parse(optarg, &a->opt.params, &err))
                return cli_fail(&err);
            break;
        default:
            fprintf(stderr, "smdplan: %s: unknown option or missing value: '%s' (see smdplan %s "
                            "--help)\n", cmd, argv[optind - 1], cmd);
            return 2;
        }
    }
    if (runs && optind != argc) {
        fprintf(stderr, "smdplan: calibrate --runs: '%s': the runs come from the database; no "
                        "file is read (see smdplan calibrate --runs --help)\n", argv[optind]);
        return 2;
    }
    if (!runs && optind != argc - 1) {
        fprintf(stderr, "smdplan: calibrate: give exactly one FILE.csv (see smdplan calibrate --help)\n");
        return 2;
    }
    a->file = runs ? NULL : argv[optind];
    if (a->file && a->write &&
        (strcmp(a->write, a->file) == 0 || outfile_same_file(a->write, a->file))) {
        fprintf(stderr, "smdplan: calibrate: --write %s: that is the input file; give another "
                        "name (the fitted values are a catalog override, not a runs table)\n",
                a->write);
        return 2;
    }
    /* a file that may not be written is refused before the fit */
    if (a->write && outfile_check(a->write, "--write", a->force, &err) != ST_OK)
        return cli_fail(&err);
    if (a->opt.framework) {
        int known = 0;
        for (int f = 0; f < PLAN_FW__COUNT; f++)
            known |= strcasecmp(a->opt.framework, plan_fw_family_key((plan_fw_family)f)) == 0;
        if (!known) {
            fprintf(stderr, "smdplan: calibrate: --framework '%s': allowed are smp, megatron, "
                            "deepspeed, fsdp, jax, smdplan, pytorch\n", a->opt.framework);
            return 2;
        }
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: smdplan calibrate FILE.csv [--framework F] [--gpu CHIP] [--fit P1,P2]\n"
            "                         [--write OUT.json [--force]] [--no-loso]\n\n"
            "Fits the planner's efficiency parameters to the measured runs in FILE.csv: for\n"
            "each (framework, GPU chip) the runs cover, and for each chip over every framework's\n"
            "runs (used by a framework with no runs of its own on it). Nonlinear least squares on\n"
            "log(predicted/measured) step time, every published source weighted the same. Prints\n"
            "each fit with standard errors, and each source's error in the fit and held out of\n"
            "it (leave-one-source-out); a framework fit that predicts a held-out source of its\n"
            "own worse than the chip's pooled fit is rejected.\n\n"
            "  --framework F     fit only this framework family (smp, megatron, deepspeed, fsdp,\n"
            "                    jax, smdplan, pytorch)\n"
            "  --gpu CHIP        fit only this chip (a catalog GPU's silicon: GA100, GH100, ...)\n"
            "  --fit LIST        parameters: gemm_eff_max, hbm_eff, flash_eff, fp8_gemm_eff,\n"
            "                    gemm_dim_half (the chip's, fitted in its pool only) (the\n"
            "                    default: all but hbm_eff, the chip's measured streaming rate;\n"
            "                    those the runs do not constrain are kept),\n"
            "                    alloc_frac (fitted to the runs' measured memory)\n"
            "  --catalog FILE    start from a catalog with these overrides\n"
            "  --write OUT.json  save the fitted values as a catalog override file (never over\n"
            "                    FILE.csv; an existing file only with --force)\n"
            "  --force           with --write: replace an existing file (never a symbolic link)\n"
            "  --no-loso         skip leave-one-source-out (and the rejection test)\n"
            "  --write-bands OUT.json  save each (stack release, chip)'s and each chip\n"
            "                    pool's held-out error as the error bands plans carry\n"
            "                    (data/error_bands.json)\n"
            "  --no-record       do not record this run\n"
            "  --db FILE         record into this database (default $SMDPLAN_DB, else smdplan.db)\n\n"
            "  smdplan calibrate --bench [ID] [--write FILE]   this host's catalog entry again\n"
            "                    from a recorded smdplan bench (ID, or the host's newest)\n"
            "  smdplan calibrate --runs [--catalog FILE]... [--write FILE]   the executor's\n"
            "                    efficiencies from its runs recorded by smdplan exec (--runs --help)\n\n"
            "Example:\n  smdplan calibrate data/reference/calibration_runs.csv --write fitted.json\n"
            "  smdplan validate data/reference/calibration_runs.csv --catalog fitted.json\n");
}

typedef struct calibrate_record {
    const char *file;
    const plan_cal_report *rep;
} calibrate_record;

static int record_calibration(db *d, const db_provenance *p, void *ctx, st_err *err)
{
    const calibrate_record *c = ctx;
    return db_record_calibration(d, p, c->file, c->rep, NULL, err);
}

/* `smdplan calibrate --bench [ID] [--write FILE] [--force] [--json] [--db FILE]`: the
 * host's catalog entry made again from a recorded bench (smdplan bench
 * --from-record: the same code that made it when measured). */
static int calibrate_bench(int argc, char **argv)
{
    cli_bench_redo_opts r = {.record = "0"};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--bench")) {
            if (i + 1 < argc && argv[i + 1][0] != '-')
                r.record = argv[++i];
        } else if (!strcmp(argv[i], "--write") && i + 1 < argc) {
            r.write = argv[++i];
        } else if (!strcmp(argv[i], "--db") && i + 1 < argc) {
            r.db_path = argv[++i];
        } else if (!strcmp(argv[i], "--threads-per-rank") && i + 1 < argc) {
            r.threads = argv[++i];
        } else if (!strcmp(argv[i], "--force")) {
            r.force = 1;
        } else if (!strcmp(argv[i], "--json")) {
            r.json = 1;
        } else {
            fprintf(stderr, "smdplan: calibrate --bench: '%s': allowed are --bench [ID], --write "
                            "FILE, --force, --json, --db FILE, --threads-per-rank LIST\n", argv[i]);
            return 2;
        }
    }
    return cli_bench_redo(&r);
}

/* ---- smdplan calibrate --runs ---- */

static void runs_usage(FILE *f)
{
    fprintf(f,
            "usage: smdplan calibrate --runs [--framework F] [--gpu CHIP] [--fit P1,P2]\n"
            "                         [--catalog FILE]... [--write OUT.json [--force]] [--no-loso]\n"
            "                         [--db FILE]\n\n"
            "Fits the efficiencies of the executor's framework (smdplan) on each chip to the runs\n"
            "smdplan exec recorded in the database, as smdplan calibrate FILE.csv fits published\n"
            "runs: each run that ended ok with a measured step and was predicted when it ran is a\n"
            "row with the exact model, layout and node it ran, its median step the reference, its\n"
            "model shape its source (each shape is also predicted held out of the fit). The chip's\n"
            "own values (smdplan bench's, or the published runs' pool) are kept; --write saves the\n"
            "fit as a catalog override (one efficiencies entry per framework and chip), which\n"
            "--catalog applies, after the files the runs were predicted with.\n\n"
            "Example (this host):\n"
            "  smdplan bench --quick --write-catalog host.json\n"
            "  smdplan exec --catalog host.json --layers 4 --hidden 256 --heads 4 --seq 128 --vocab 512\n"
            "  smdplan calibrate --runs --catalog host.json --write fitted.json\n"
            "  smdplan exec --catalog host.json --catalog fitted.json ...   # predicted with the fit\n");
}

static int calibrate_runs(int argc, char **argv)
{
    cal_args a;
    int pe = parse_args(argc, argv, 1, &a);
    if (pe)
        return pe < 0 ? 0 : pe;
    const char *const *catalogs = a.catalogs;
    int ncat = a.ncat, no_record = a.no_record;
    const char *write = a.write, *db_path = a.db_path;
    plan_cal_options opt = a.opt;
    st_err err = {0};
    const char *path = db_default_path(db_path);
    char label[CLI_PATH_MAX + 32];
    snprintf(label, sizeof label, "the executed runs in %s", path);

    plan_catalog cat = {0};
    db_cal_runs cr = {0};
    plan_cal_report *rep = calloc(1, sizeof *rep);
    int ex = 0;
    int rc = rep ? data_catalog_load(NULL, &cat, &err) : ST_RAISE(&err, ST_ENOMEM, "out of memory");
    for (int i = 0; rc == ST_OK && i < ncat; i++)
        rc = data_catalog_merge(&cat, catalogs[i], &err);
    if (rc == ST_OK && opt.silicon)
        rc = plan_cal_silicon_check(&cat, opt.silicon, &err);
    /* every run that can take part, and why the others cannot */
    if (rc == ST_OK)
        rc = db_cal_runs_load(path, &cat, opt.framework, &cr, &err);
    if (rc != ST_OK) {
        ex = cli_fail(&err);
        goto done;
    }
    const plan_validate_result *res = cr.rows;
    int nruns = cr.nruns, nrows = cr.nrows;
    if (nrows == 0) {
        fprintf(stderr, "smdplan: calibrate --runs: none of the %d executed run%s in %s can be "
                        "fitted%s%s\n", nruns, nruns == 1 ? "" : "s", path,
                nruns ? "; the first: " : " (record some with smdplan exec)",
                nruns ? cr.why[0] : "");
        ex = 2;
        goto done;
    }
    /* what each run was predicted at before the fit */
    double *before = calloc((size_t)nrows, sizeof *before);
    for (int i = 0; before && i < nrows; i++)
        before[i] = plan_validate_step_s(&cat, &res[i]);
    rc = plan_calibrate_results(&cat, cr.rows, nrows, &opt, rep, &err);
    if (rc == ST_OK && write)
        rc = data_calibration_write(write, "--write", a.force, &cat, rep, label, &err);
    if (rc != ST_OK) {
        ex = cli_fail(&err);
        free(before);
        goto done;
    }
    rpt_cal_runs_text(stdout, label, &cat, &cr, before, rep);
    if (write)
        printf("wrote %s (apply with --catalog %s, after the catalog files above)\n", write,
               write);
    calibrate_record crec = {label, rep};
    cli_record(db_path, no_record, record_calibration, &crec);
    free(before);
done:
    db_cal_runs_free(&cr);
    free(rep);
    plan_catalog_free(&cat);
    return ex;
}

int cli_calibrate_cmd(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--bench"))
            return calibrate_bench(argc, argv);
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--runs"))
            return calibrate_runs(argc, argv);
    cal_args a;
    int pe = parse_args(argc, argv, 0, &a);
    if (pe)
        return pe < 0 ? 0 : pe;
    const char *write = a.write, *db_path = a.db_path, *path = a.file;
    int no_record = a.no_record;
    plan_cal_options opt = a.opt;
    st_err err = {0};

    plan_catalog cat = {0};
    data_csv csv = {0};
    plan_validate_row *rows = NULL;
    plan_cal_report *rep = calloc(1, sizeof *rep);
    int ex = 0;
    int rc = rep ? data_catalog_load_base(&cat, &err) : ST_RAISE(&err, ST_ENOMEM, "out of memory");
    for (int i = 0; rc == ST_OK && i < a.ncat; i++)
        rc = data_catalog_merge(&cat, a.catalogs[i], &err);
    if (rc == ST_OK) /* the models a row may name without its shape */
        rc = data_known_models_load(&err);
    if (rc == ST_OK)
        rc = data_csv_load(path, &csv, &err);
    if (rc == ST_OK) {
        rows = calloc(csv.nrows ? (size_t)csv.nrows : 1, sizeof *rows);
        if (!rows)
            rc = ST_RAISE(&err, ST_ENOMEM, "out of memory");
    }
    if (rc == ST_OK)
        rc = data_csv_validate_rows(&csv, path, rows, &err);
    if (rc == ST_OK && opt.silicon)
        rc = plan_cal_silicon_check(&cat, opt.silicon, &err);
    if (rc == ST_OK)
        rc = plan_calibrate(&cat, rows, csv.nrows, &opt, rep, &err);
    if (rc == ST_OK && write)
        rc = data_calibration_write(write, "--write", a.force, &cat, rep, path, &err);
    if (rc == ST_OK && a.write_bands && !opt.loso)
        rc = ST_RAISE(&err, ST_EINVAL, "--write-bands: the bands are the held-out errors; "
                      "drop --no-loso");
    if (rc == ST_OK && a.write_bands)
        rc = data_bands_write(a.write_bands, "--write-bands", a.force, rep, path, &err);
    if (rc != ST_OK) {
        ex = cli_fail(&err);
        goto done;
    }
    rpt_cal_text(stdout, path, csv.nrows, rep);
    if (write)
        printf("wrote %s (apply with --catalog %s)\n", write, write);
    if (a.write_bands)
        printf("wrote %s (the error bands of predicted steps)\n", a.write_bands);
    calibrate_record rec = {path, rep};
    cli_record(db_path, no_record, record_calibration, &rec);
done:
    free(rep);
    free(rows);
    data_csv_free(&csv);
    plan_catalog_free(&cat);
    return ex;
}
