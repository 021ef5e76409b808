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

/* Read a whole file into a NUL-terminated heap buffer (free()). */
int data_read_file(const char *path, char **out, size_t *len, st_err *err);

#endif
