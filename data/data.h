/*
 * data.h: readers for smdplan's data files.
 *
 * The instance catalog, the model presets and the hardware efficiency curves
 * live in JSON files under data/ (installed to share/smdplan), not in C
 * arrays, so a user can add an instance type without recompiling. A user file
 * (--catalog FILE) adds entries or overrides fields of existing ones.
 * Hugging Face config.json files and calibration CSVs are read here too.
 *
 * Every reader returns a status and a one-line message naming the file, the
 * entry and the bad field; nothing is half-filled on failure.
 */
#ifndef SMD_DATA_H
#define SMD_DATA_H

#include "common/st.h"
#include "planner/plan.h"
#include "planner/plan_framework.h"
#include "planner/plan_hwfit.h"

/* Directory holding the data files: $SMDPLAN_DATA if set, else the source
 * tree's data/ when it exists (a build tree), else the installed share dir.
 * Returns a static string. */
const char *data_dir(void);

/* Read the catalog file (GPUs, instance types, efficiency curves) at path;
 * NULL means the shipped catalog: data_dir()/catalog.json with the shipped
 * calibration data_dir()/calibration.json merged over it when that file
 * exists (the efficiencies `smdplan calibrate` fitted to the published runs
 * in data/reference). On success cat owns its arrays (plan_catalog_free). */
int data_catalog_load(const char *path, plan_catalog *cat, st_err *err);

/* The shipped catalog without the shipped calibration: what `smdplan
 * calibrate` starts from, so that fitting the shipped runs again gives the
 * shipped calibration back. */
int data_catalog_load_base(plan_catalog *cat, st_err *err);

/* data_dir()/calibration.json, or NULL when it is absent. Static string. */
const char *data_calibration_path(void);

/* Merge a user catalog file into cat: entries with a new name are added,
 * entries with an existing name have the fields given replaced. Re-links. */
int data_catalog_merge(plan_catalog *cat, const char *path, st_err *err);

/* A measured-rates file (data_measured.c; a JSON file under data/measured/, named by a
 * catalog GPU's "measured"): what one device reached, for
 * plan_gpu_measured. path is a file; name (parse) is used in messages. */
int data_measured_load(const char *path, plan_measured *out, st_err *err);
int data_measured_parse(const char *text, size_t len, const char *name, plan_measured *out,
                        st_err *err);

/* Stack profiles (data_frameworks.c): data_dir()/frameworks.json, one entry
 * per release of a stack, inheriting from an earlier one. */

/* Read the profiles at path (NULL: the shipped file) and install them in
 * the planner (plan_frameworks_set); on any error nothing is installed and
 * err names the file, the entry and the field. */
int data_frameworks_load(const char *path, st_err *err);

/* What words of a run's architecture text say of the model
 * (data/model_families.json, or path), installed in the planner
 * (plan_model_traits_set) for smdplan validate; parse: the same from text. */
int data_families_load(const char *path, st_err *err);
int data_families_parse(const char *text, size_t len, const char *name, st_err *err);
const char *data_families_path(void);

/* Parse a profiles text: *out (malloc'ed, free()) gets *n resolved
 * profiles in file order, *def the index of the default. For the loader,
 * tests and fuzzing; name is used in messages. */
int data_frameworks_parse(const char *text, size_t len, const char *name,
                          plan_framework **out, int *n, int *def, st_err *err);

/* data_dir()/frameworks.json. A static string. */
const char *data_frameworks_path(void);

/* One value of a profile as the file gives it: its field, its JSON text,
 * the entry it is written in (the profile's own, or the one it inherits
 * from) and the citation beside it ("_FIELD", else that entry's source). */
typedef struct data_fw_line {
    char field[32];
    char value[200];
    char from[PLAN_FW_KEY_MAX];
    char cite[600];
} data_fw_line;

/* Every value of profile key (exactly as the file names it) with its
 * source: *out (calloc'ed, free()) gets *n lines. */
int data_frameworks_describe(const char *path, const char *key, data_fw_line **out, int *n,
                             st_err *err);

/* How many behaviour values the file gives without a citation beside them
 * ("_FIELD"); the first as "entry.field" into what. -1 on a read error. */
int data_frameworks_uncited(const char *path, char *what, size_t size, st_err *err);

/* Read the model presets; NULL means data_dir()/models.json. */
int data_presets_load(const char *path, plan_presets *presets, st_err *err);

/* Read a Hugging Face config.json (GPT-2, GPT-NeoX/J, OPT, BLOOM, Llama,
 * Mistral, Qwen2 families: n_layer/num_hidden_layers, n_embd/hidden_size,
 * n_head/num_attention_heads, num_key_value_heads, intermediate_size/n_inner,
 * n_positions/max_position_embeddings, vocab_size, tie_word_embeddings) into a
 * finished model. */
int data_hfconfig_load(const char *path, plan_model *m, st_err *err);

/* Same, from a JSON text already in memory (len bytes, need not be
 * NUL-terminated); name is used in messages. For fuzzing and tests. */
int data_hfconfig_parse(const char *text, size_t len, const char *name, plan_model *m,
                        st_err *err);

/* A widely used open model by name ("meta-llama/Llama-3.1-70B", or without
 * its organization, or an alias), offline, from data_dir()/hf_models.json:
 * its published config.json fields read as a local config.json is, the
 * sequence its training length (the entry's train_seq, cited), its name
 * and sources in m. ST_ENOENT naming the closest names when there is none;
 * a model the planner cannot represent is refused as its config.json is. */
int data_hf_named_load(const char *name, plan_model *m, st_err *err);

/* Every model of that table, each resolved (or why not). */
#define DATA_HF_ALIASES 3
typedef struct data_hf_named {
    char name[96];
    char aliases[DATA_HF_ALIASES][64]; /* its other names, as the file gives them */
    int naliases;
    int ok;                      /* model holds the shape */
    plan_model model;
    char why[256];               /* otherwise, why not */
} data_hf_named;
/* *out is allocated (free() it), *n its entries. */
int data_hf_named_list(data_hf_named **out, int *n, st_err *err);

/* Same for a catalog text (used by data_catalog_load and the fuzz target). */
int data_catalog_parse(const char *text, size_t len, const char *name, plan_catalog *cat,
                       st_err *err);

/* SageMaker price lists by region (data_prices.c): each region's published
 * per-hour prices of ml.* instances with the page they came from and the
 * date they were read. */
typedef struct data_price {
    char instance[64];           /* "ml.p4d.24xlarge" */
    double usd_per_hour;         /* > 0 */
} data_price;
typedef struct data_price_list {
    char region[32];             /* "us-east-1" */
    char what[96];               /* "SageMaker training, on demand" */
    char source[PLAN_SOURCE_MAX];/* the URL the prices were published at */
    char as_of[16];              /* YYYY-MM-DD they were read */
    int n;
    data_price *price;           /* owned */
} data_price_list;
typedef struct data_prices {
    int n;
    data_price_list *list;       /* owned */
} data_prices;

/* Read the price lists; NULL means data_dir()/sagemaker_prices.json. A price
 * without a URL and a date, a region given twice, a price that is not a
 * positive number are refused with a message naming the file, the list and
 * the entry. data_prices_free releases. */
int data_prices_load(const char *path, data_prices *out, st_err *err);
int data_prices_parse(const char *text, size_t len, const char *name, data_prices *out,
                      st_err *err);
void data_prices_free(data_prices *p);
/* The list of a region, or NULL. */
const data_price_list *data_prices_region(const data_prices *p, const char *region);
/* USD per hour of an instance type in a list ("ml." optional), 0 when the
 * list has none. */
double data_price_of(const data_price_list *l, const char *instance);

/* Error bands of predicted step times (data_bands.c): per (stack release,
 * chip) and per chip pool, the held-out error of the fits (smdplan
 * calibrate --write-bands). */
typedef struct data_band {
    char stack[32];              /* the release, plan_framework.key ("megatron@2024"); ""
                                  * for a chip's pool */
    char framework[16];          /* its family ("megatron"); "" for a chip's pool */
    char silicon[32];
    double pct;                  /* mean over sources of the held-out mean |error|, % */
    int sources, rows;
} data_band;
typedef struct data_bands {
    int n;
    data_band *v;                /* owned */
    double worst_pct;            /* the worst source held out, any chip */
} data_bands;
/* NULL path: data_dir()/error_bands.json. */
int data_bands_load(const char *path, data_bands *out, st_err *err);
int data_bands_parse(const char *text, size_t len, const char *file, data_bands *out,
                     st_err *err);
void data_bands_free(data_bands *b);
/* The band (percent of the step) a prediction of stack release stack
 * (plan_framework.key) on chip silicon carries: the held-out error of that
 * release's runs on the chip, else its chip pool's, else the worst held-out
 * source; one sentence saying which into basis (n bytes). */
double data_band_of(const data_bands *b, const char *stack, const char *silicon,
                    char *basis, size_t n);

/* What an AWS Price List offer file held. */
typedef struct data_offer_info {
    char version[48];            /* the file's "version" */
    char published[16];          /* its publicationDate, YYYY-MM-DD */
    int products;                /* products read */
    int prices;                  /* training instance prices kept */
    int skipped;                 /* training products without a region or an hourly price */
    int conflicts;               /* a second, different price of a type in a region (the
                                  * first is kept) */
} data_offer_info;

/* The training instances' on-demand prices per region of the AWS Price
 * List bulk offer file of Amazon SageMaker (text, len bytes; file names it
 * in messages), each list dated with the file's publication date and
 * citing the file's URL of that version. ST_EPARSE / ST_EINVAL (naming what
 * is wrong) for another file, or one without a single such price. */
int data_prices_from_offer(const char *text, size_t len, const char *file, data_prices *out,
                           data_offer_info *info, st_err *err);

/* The price lists as the JSON data_prices_parse reads, doc as its "_doc";
 * NULL when out of memory. Caller frees. */
char *data_prices_json(const data_prices *p, const char *doc);

/* Put from's lists into into, replacing a region's list both have. */
int data_prices_merge(data_prices *into, const data_prices *from, st_err *err);

/* Read a whole file into a NUL-terminated heap buffer (free()). */
int data_read_file(const char *path, char **out, size_t *len, st_err *err);

/* ---- a host's catalog entry file (data_catalog_entry.c) ----
 * What smdplan bench fitted (planner/plan_hwfit.h), in the catalog's own
 * format: devices, instance types and curves gathered, then written. */
typedef struct data_catalog_entry data_catalog_entry;

int data_catalog_entry_new(data_catalog_entry **out, st_err *err);
void data_catalog_entry_free(data_catalog_entry *e); /* NULL: nothing */

/* A device named name (its silicon too) with g's figures; each of the
 * kernel floors, attention rates and row times, gemm_align_bytes and
 * align_partial_factor only when positive; mem_bytes rounded down. The
 * strings are copied. */
void data_catalog_entry_add_gpu(data_catalog_entry *e, const char *name, const plan_gpu *g,
                                const char *source, const char *note);

/* An instance type of device gpu with in's links and node figures
 * (host_mem_bytes only when positive) and the curves named. */
void data_catalog_entry_add_instance(data_catalog_entry *e, const char *name, const char *gpu,
                                     const plan_instance *in, const char *intra_curve,
                                     const char *net_curve, const char *source,
                                     const char *note);

/* A curve, once per name; whether one of that name is there; how many. */
void data_catalog_entry_add_curve(data_catalog_entry *e, const plan_curve *c);
int data_catalog_entry_has_curve(const data_catalog_entry *e, const char *name);
int data_catalog_entry_ncurves(const data_catalog_entry *e);

/* The "gpus", "instances" or "curves" gathered, as JSON text (malloc'd;
 * NULL for another key or out of memory). */
char *data_catalog_entry_json(const data_catalog_entry *e, const char *key);

/* Write the entry to path, checked by the catalog's reader first. An
 * existing file smdplan bench wrote keeps its entries of other names; an
 * existing file is replaced only with force, never through a symbolic
 * link (ST_EEXIST and the like, common/outfile.h). */
int data_catalog_entry_write(const data_catalog_entry *e, const char *path, int force,
                             st_err *err);

#endif
