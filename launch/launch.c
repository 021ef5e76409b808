/*
 * launch.c: --emit KIND, the launch file of the plan ranked #1 in the
 * table `smdplan plan` prints (after the simulator's re-ranking), for the
 * stack the plan is for; see launch_int.h for where each stack's lives.
 *
 * KIND is the stack's own launch (megatron, deepspeed, torchtitan, fsdp,
 * maxtext, smdplan; sagemaker and mpirun for SMP v1, sagemaker for SMP v2),
 * "launch" for the plan's stack's, or "slurm" for an sbatch script of it. A
 * kind that is not the plan's stack's is refused naming both, never
 * translated: a plan's times are its stack's.
 *
 * Every string that reaches a launch file is escaped for its language:
 * Python string literals (launch__py_str), shell words in single quotes
 * (launch__sh_str), TOML basic strings (launch__toml_str), JSON by cJSON; text in
 * a comment is reduced to printable ASCII (text_comment, common/text.h). Files a job
 * needs are written by the script with a quoted here-document (POSIX Shell
 * Command Language 2.7.4: nothing in it is expanded), their text generated
 * by smdplan, so no line of it can be the delimiter.
 */
#include "launch/launch_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "common/text.h"
#include "common/units.h"
#include "planner/plan_framework.h"

#define GIB 1073741824.0
/* The here-document delimiter of the files a script writes. */
#define HEREDOC_END "SMDPLAN_EOF"
/* torchrun's rendezvous port when MASTER_PORT is not set: PyTorch's
 * default master port (torch/distributed/run.py, --master-port 29500). */
#define RDZV_PORT "29500"

/* ------------------------------------------------------------------------ */
/* Escaping                                                                  */
/* ------------------------------------------------------------------------ */

/* Length of the valid UTF-8 sequence of a non-ASCII character at s (2-4)
 * with its code point, or 0 when s does not start one (RFC 3629, Sec. 4: no
 * overlong forms, no surrogates, nothing past U+10FFFF). */
static int utf8_next(const unsigned char *s, uint32_t *cp)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    int n;
    uint32_t v;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
        v = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        v = c & 0x0F;
        if (c == 0xE0)
            lo = 0xA0;
        if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        v = c & 0x07;
        if (c == 0xF0)
            lo = 0x90;
        if (c == 0xF4)
            hi = 0x8F;
    } else {
        return 0;
    }
    for (int i = 1; i < n; i++) {
        unsigned char d = s[i]; /* a NUL fails here: nothing past the end is read */
        if (d < (i == 1 ? lo : 0x80) || d > (i == 1 ? hi : 0xBF))
            return 0;
        v = (v << 6) | (d & 0x3F);
    }
    *cp = v;
    return n;
}

/* s as a Python string literal in double quotes, ASCII only: backslash and
 * quote escaped, control characters as \n \r \t or \xNN, UTF-8 sequences as
 * \uXXXX / \UXXXXXXXX (the same characters), bytes that are not UTF-8 as
 * \xNN (the Latin-1 character of that byte: nothing can end the literal). */
void launch__py_str(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        uint32_t cp;
        int n;
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p++);
        else if (*p == '\n')
            fputs("\\n", f), p++;
        else if (*p == '\r')
            fputs("\\r", f), p++;
        else if (*p == '\t')
            fputs("\\t", f), p++;
        else if (*p >= 0x20 && *p < 0x7F)
            fputc(*p++, f);
        else if (*p >= 0x80 && (n = utf8_next(p, &cp)) > 0) {
            fprintf(f, cp > 0xFFFF ? "\\U%08X" : "\\u%04X", (unsigned)cp);
            p += n;
        } else
            fprintf(f, "\\x%02x", *p++);
    }
    fputc('"', f);
}

/* s as one shell word: in single quotes, each ' written as '\'' (POSIX sh,
 * Shell Command Language 2.2.2: nothing is special inside single quotes). */
void launch__sh_str(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    }
    fputc('\'', f);
}

/* s as a shell word: as it is when every character is one no shell treats
 * specially, else single-quoted (sh_str). */
void launch__sh_word(FILE *f, const char *s)
{
    int plain = *s != '\0';
    for (const char *p = s; *p && plain; p++)
        plain = strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./=:,+-@%",
                       *p) != NULL;
    if (plain)
        fputs(s, f);
    else
        launch__sh_str(f, s);
}

/* A comment block: text (already made safe, or trusted) wrapped at spaces
 * into lines that start with "# ". */
void launch__comment_block(FILE *f, const char *text)
{
    char safe[8192];
    text_comment(text, safe, sizeof safe);
    const char *p = safe;
    while (*p) {
        size_t len = strlen(p);
        size_t take = len;
        if (len > LAUNCH_WRAP_COLS - 2) {
            take = LAUNCH_WRAP_COLS - 2;
            while (take > 20 && p[take] != ' ')
                take--;
            if (p[take] != ' ')
                take = LAUNCH_WRAP_COLS - 2;
        }
        fprintf(f, "# %.*s\n", (int)take, p);
        p += take;
        while (*p == ' ')
            p++;
    }
}

/* A JSON value as a Python literal (dicts of str, bool, int, float). */
void launch__py_value(FILE *f, const cJSON *v, int indent)
{
    if (cJSON_IsObject(v)) {
        fputs("{\n", f);
        for (const cJSON *it = v->child; it; it = it->next) {
            fprintf(f, "%*s", indent + 4, "");
            launch__py_str(f, it->string ? it->string : "");
            fputs(": ", f);
            launch__py_value(f, it, indent + 4);
            fputs(",\n", f);
        }
        fprintf(f, "%*s}", indent, "");
    } else if (cJSON_IsString(v)) {
        launch__py_str(f, v->valuestring ? v->valuestring : "");
    } else if (cJSON_IsBool(v)) {
        fputs(cJSON_IsTrue(v) ? "True" : "False", f);
    } else if (cJSON_IsNumber(v)) {
        double x = v->valuedouble;
        if (x == floor(x) && fabs(x) < 9007199254740992.0)
            fprintf(f, "%lld", (long long)x);
        else
            fprintf(f, "%.17g", x);
    } else {
        fputs("None", f);
    }
}


void launch__toml_str(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        uint32_t cp;
        int n;
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p++);
        else if (*p == '\n')
            fputs("\\n", f), p++;
        else if (*p == '\t')
            fputs("\\t", f), p++;
        else if (*p >= 0x20 && *p < 0x7F)
            fputc(*p++, f);
        else if (*p >= 0x80 && (n = utf8_next(p, &cp)) > 0) {
            fprintf(f, cp > 0xFFFF ? "\\U%08X" : "\\u%04X", (unsigned)cp);
            p += n;
        } else /* a control character, or a byte that is not UTF-8: its code */
            fprintf(f, "\\u%04X", (unsigned)*p++);
    }
    fputc('"', f);
}

/* ------------------------------------------------------------------------ */
/* Which launch                                                              */
/* ------------------------------------------------------------------------ */

/* The launch kind of the plan's stack ("megatron", "sagemaker", ...), or
 * NULL for a stack smdplan writes no launch for (with why). */
static const char *stack_kind(const plan_layout *l, const char **why)
{
    const plan_framework *fw = plan_framework_get(l->framework);
    *why = NULL;
    switch (fw->family) {
    case PLAN_FW_SMP: return "sagemaker";
    case PLAN_FW_MEGATRON: return "megatron";
    case PLAN_FW_DEEPSPEED: return "deepspeed";
    case PLAN_FW_FSDP:
        if (!strcmp(fw->stack, "smp2"))
            return "sagemaker"; /* SMP v2's estimator (launch_smp2.c) */
        if (!strcmp(fw->stack, "torchtitan"))
            return "torchtitan";
        if (!strcmp(fw->stack, "fsdp"))
            return "fsdp";
        *why = "it is a published stack smdplan reads runs of, not one it launches";
        return NULL;
    case PLAN_FW_JAX: return "maxtext";
    case PLAN_FW_SMDPLAN: return "smdplan";
    default:
        *why = strcmp(fw->stack, "pytorch")
                   ? "it is a published stack smdplan reads runs of, not one it launches"
                   : "it stands for stacks smdplan does not know by name";
        return NULL;
    }
}

/* The SMP kinds (launch_smp.c, launch_smp2.c) and the rest (launch_stacks.c). */
static int smp_kind(const char *k)
{
    return !strcmp(k, "sagemaker") || !strcmp(k, "mpirun");
}

/* 1: the plan is SMP v2's, whose estimator launch_smp2.c writes. */
static int smp2_plan(const plan_result *r)
{
    return !strcmp(plan_framework_get(r->top[0].layout.framework)->stack, "smp2");
}

/* what as asked, resolved against the plan: the kind to build and whether
 * it goes into an sbatch script. ST_EINVAL (one line) when the plan's
 * stack is not the kind's. */
static int resolve_kind(const char *what, const plan_layout *l, const char **kind, int *slurm,
                        st_err *err)
{
    const plan_framework *fw = plan_framework_get(l->framework);
    const char *why, *own = stack_kind(l, &why);
    *slurm = !strcmp(what, "slurm");
    if (!strcmp(what, "launch") || *slurm) {
        if (!own)
            return ST_RAISE(err, ST_EINVAL, "--emit %s: no launch for %s (--framework %s): %s",
                            what, fw->label, fw->key, why);
        *kind = own;
        if (*slurm && smp_kind(own))
            return ST_RAISE(err, ST_EINVAL, "--emit slurm: %s runs on SageMaker's own "
                            "cluster; use --emit sagemaker%s", fw->label,
                            strcmp(fw->stack, "smp2") ? " (or mpirun)" : "");
        if (*slurm && !strcmp(own, "smdplan"))
            return ST_RAISE(err, ST_EINVAL, "--emit slurm: the executor's sbatch script is "
                            "smdplan exec --emit slurm, which records the run it launches");
        return ST_OK;
    }
    *kind = what;
    if (smp_kind(what) || (own && !strcmp(own, what)))
        return ST_OK; /* SMP's own refusal names the knobs (launch_smp.c) */
    return ST_RAISE(err, ST_EINVAL, "--emit %s: the plan is for %s (--framework %s), its times "
                    "that stack's; %s", what, fw->label, fw->key,
                    own ? "use --emit launch for its launch, or plan with the framework of the "
                          "launch you want"
                        : why);
}

/* ------------------------------------------------------------------------ */
/* The job                                                                   */
/* ------------------------------------------------------------------------ */

void launch__note(launch_job *j, const char *fmt, ...)
{
    if (j->nnotes >= LAUNCH_NOTES_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->notes[j->nnotes++], LAUNCH_NOTE_LEN, fmt, ap);
    va_end(ap);
}

void launch__arg(launch_job *j, const char *s)
{
    cJSON_AddItemToArray(j->program, cJSON_CreateString(s));
}

void launch__argf(launch_job *j, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    launch__arg(j, buf);
}

static void job_fini(launch_job *j)
{
    cJSON_Delete(j->env);
    cJSON_Delete(j->files);
    cJSON_Delete(j->configs);
    cJSON_Delete(j->program);
    j->env = j->files = j->configs = j->program = NULL;
}

static int job_make(const char *kind, const launch_plan *p, int simulated, launch_job *j,
                    st_err *err)
{
    const plan_model *m = p->m;
    memset(j, 0, sizeof *j);
    j->kind = kind;
    j->p = p;
    j->m = m;
    j->c = p->c;
    j->l = &p->r->top[0].layout;
    j->e = &p->r->top[0].est;
    j->sim_step_s = simulated ? p->sim_step_s : 0;
    if (p->band_pct > 0) {
        snprintf(j->band_text, sizeof j->band_text, "+-%.0f %% (%s)", p->band_pct,
                 p->band_basis);
        j->band = j->band_text;
    }
    plan_stage_layers(m, j->l, j->stage_layers);
    for (int i = 1; i < j->l->pp; i++)
        j->uneven |= j->stage_layers[i] != j->stage_layers[0];
    /* steps to train --tokens (its default, GPT-3's 300B: cli_plan.c) */
    double per_step = (double)j->l->global_batch * (double)m->seq;
    j->train_steps = per_step > 0 ? (int64_t)ceil(p->tokens / per_step) : 1;
    if (j->train_steps < 1)
        j->train_steps = 1;
    j->env = cJSON_CreateObject();
    j->files = cJSON_CreateObject();
    j->configs = cJSON_CreateObject();
    j->program = cJSON_CreateArray();
    if (!j->env || !j->files || !j->configs || !j->program) {
        job_fini(j);
        return ST_RAISE(err, ST_ENOMEM, "--emit %s: out of memory", kind);
    }
    int rc = launch__build(j, err);
    if (rc != ST_OK)
        job_fini(j);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Scripts                                                                   */
/* ------------------------------------------------------------------------ */

/* An argument: a reference to a variable the script sets ("$RDZV") in
 * double quotes, anything else a plain or single-quoted word. */
static void sh_arg(FILE *f, const char *s)
{
    int var = s[0] == '$' && s[1];
    for (const char *p = s + 1; var && *p; p++)
        var = (*p >= 'A' && *p <= 'Z') || *p == '_';
    if (var)
        fprintf(f, "\"%s\"", s);
    else
        launch__sh_word(f, s);
}

/* The launcher's arguments (before the program), into a (array). */
static void launcher_argv(const launch_job *j, int slurm, cJSON *a)
{
    char buf[64];
#define ARG(s) cJSON_AddItemToArray(a, cJSON_CreateString(s))
    if (slurm && j->launcher != LAUNCH_COMMAND)
        ARG("srun");
    switch (j->launcher) {
    case LAUNCH_TORCHRUN:
    case LAUNCH_DEEPSPEED:
        /* under Slurm every stack starts with torchrun, one task per node:
         * DeepSpeed's engine reads torchrun's environment as well
         * (deepspeed.init_distributed) */
        if (j->launcher == LAUNCH_DEEPSPEED && !slurm) {
            /* deepspeed/launcher/runner.py: --hostfile, --num_nodes, --num_gpus */
            ARG("deepspeed");
            ARG("--hostfile");
            ARG("hostfile");
            ARG("--num_nodes");
            snprintf(buf, sizeof buf, "%d", j->c->nodes);
            ARG(buf);
            ARG("--num_gpus");
            snprintf(buf, sizeof buf, "%d", j->c->inst->gpus_per_node);
            ARG(buf);
            break;
        }
        /* torch/distributed/run.py: --nnodes, --nproc-per-node, --rdzv-id,
         * --rdzv-backend, --rdzv-endpoint */
        ARG("torchrun");
        ARG("--nnodes");
        snprintf(buf, sizeof buf, "%d", j->c->nodes);
        ARG(buf);
        ARG("--nproc-per-node");
        snprintf(buf, sizeof buf, "%d", j->c->inst->gpus_per_node);
        ARG(buf);
        ARG("--rdzv-id");
        ARG(slurm ? "$SLURM_JOB_ID" : "smdplan");
        ARG("--rdzv-backend");
        ARG("c10d");
        ARG("--rdzv-endpoint");
        ARG("$RDZV");
        break;
    case LAUNCH_PER_NODE:
    case LAUNCH_COMMAND:
        break;
    }
#undef ARG
}

static void layout_text(const plan_layout *l, char *buf, size_t n)
{
    char s[24], act[16];
    snprintf(buf, n, "tp %d, pp %d, dp %d, cp %d, micro-batch %d x %d microbatches, "
             "in flight %s, schedule %s, recompute %s, sharding %s, sequence parallel %s, %s",
             l->tp, l->pp, l->dp, l->cp, l->micro_batch, l->microbatches,
             plan_framework_act_label(l, act, sizeof act), plan_framework_sched_label(l, s, sizeof s),
             plan_recompute_name(l->recompute), plan_sharding_name(l->sharding),
             l->sequence_parallel ? "on" : "off", plan_precision_name(l->precision));
}

static void header(FILE *f, const launch_job *j, int slurm)
{
    char text[2400], lay[400], sim[64] = "", split[1200] = "";
    snprintf(text, sizeof text, "%s%s for plan #1 of: %s", j->title,
             slurm ? " as a Slurm batch job" : "", j->p->command_line);
    launch__comment_block(f, text);
    launch__comment_block(f, "(the first row of the table that command prints without --emit: ranked "
                          "by the simulated step when the top plans are simulated)");
    layout_text(j->l, lay, sizeof lay);
    snprintf(text, sizeof text, "Model %s on %d x %s; plan for %s: %s.", j->m->name, j->c->nodes,
             j->c->inst->name, plan_framework_get(j->l->framework)->label, lay);
    launch__comment_block(f, text);
    if (j->l->pp > 1) {
        size_t u = (size_t)snprintf(split, sizeof split, "Layers per pipeline stage: ");
        for (int i = 0; i < j->l->pp && u + 8 < sizeof split; i++)
            u += (size_t)snprintf(split + u, sizeof split - u, "%s%d", i ? "," : "",
                                  j->stage_layers[i]);
        snprintf(split + u, sizeof split - u, "%s",
                 !j->uneven ? " (even)"
                 : plan_split_embedding_loss(j->m, j->l, NULL, NULL)
                     ? " (the stack's own: the embedding and the loss take layers' places)"
                     : " (uneven: faster by the planner's model than an even split)");
        launch__comment_block(f, split);
    }
    if (j->sim_step_s > 0)
        snprintf(sim, sizeof sim, ", simulated %.3f s", j->sim_step_s);
    snprintf(text, sizeof text,
             "Predicted step %.3f s%s%s%s; worst pipeline stage needs %.1f GiB of the GPU's "
             "%.1f GiB; %lld steps train %.3g tokens.",
             j->e->time.step_s, j->band ? " " : "", j->band ? j->band : "", sim,
             plan_mem_need_bytes(&j->e->mem) / GIB, j->e->capacity_bytes / GIB,
             (long long)j->train_steps, j->p->tokens);
    launch__comment_block(f, text);
    fputs("#\n", f);
    for (int i = 0; i < j->nnotes; i++)
        launch__comment_block(f, j->notes[i]);
    if (j->sources)
        launch__comment_block(f, j->sources);
}

static void write_files(FILE *f, const launch_job *j)
{
    for (const cJSON *it = j->files->child; it; it = it->next) {
        fputs("cat > ", f);
        launch__sh_word(f, it->string);
        fputs(" <<'" HEREDOC_END "'\n", f);
        fputs(it->valuestring, f);
        size_t n = strlen(it->valuestring);
        if (n == 0 || it->valuestring[n - 1] != '\n')
            fputc('\n', f);
        fputs(HEREDOC_END "\n", f);
    }
}

static void write_script(FILE *f, const launch_job *j, int slurm)
{
    const char *stack = plan_framework_get(j->l->framework)->key;
    if (slurm) {
        fputs("#!/bin/bash\n", f);
        fprintf(f, "#SBATCH --job-name=smdplan-%s\n", stack);
        fprintf(f, "#SBATCH --nodes=%d\n", j->c->nodes);
        fputs("#SBATCH --ntasks-per-node=1\n", f);
        fprintf(f, "#SBATCH --gpus-per-node=%d\n", j->c->inst->gpus_per_node);
        fputs("#SBATCH --exclusive\n", f);
    } else {
        fputs("#!/bin/sh\n", f);
    }
    header(f, j, slurm);
    if (slurm)
        launch__comment_block(f, "Submit with sbatch from a directory every node sees: the files "
                              "below are written there once, and srun starts one launcher per "
                              "node (sbatch, srun: Slurm's manual pages).");
    else if (j->launcher == LAUNCH_TORCHRUN && j->c->nodes > 1)
        launch__comment_block(f, "Run this script on every node, with MASTER_ADDR set to the "
                              "first node's address (and MASTER_PORT, default " RDZV_PORT
                              "): torchrun's c10d rendezvous brings the nodes together.");
    else if (j->launcher == LAUNCH_DEEPSPEED)
        launch__comment_block(f, "Run this script on the first node: deepspeed starts every "
                              "node's ranks over ssh (pdsh) from 'hostfile', one line 'HOST "
                              "slots=N' per node (deepspeed/launcher/runner.py).");
    fputs("set -eu\n", f);
    for (const cJSON *it = j->env->child; it; it = it->next) {
        fprintf(f, "%s=", it->string);
        launch__sh_word(f, it->valuestring);
        fprintf(f, "\nexport %s\n", it->string);
    }
    write_files(f, j);
    if (j->launcher == LAUNCH_TORCHRUN || (slurm && j->launcher == LAUNCH_DEEPSPEED)) {
        if (slurm)
            fputs("RDZV=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1):"
                  RDZV_PORT "\"\n", f);
        else if (j->c->nodes > 1)
            fputs("RDZV=\"${MASTER_ADDR:?the first node's address}:"
                  "${MASTER_PORT:-" RDZV_PORT "}\"\n", f);
        else
            fputs("RDZV=\"${MASTER_ADDR:-localhost}:${MASTER_PORT:-" RDZV_PORT "}\"\n", f);
    }
    cJSON *launch = cJSON_CreateArray();
    if (!launch)
        return;
    launcher_argv(j, slurm, launch);
    int first = 1;
    /* the launcher's words, a new line before one that would pass 80 columns */
    int col = 0;
    for (const cJSON *it = launch->child; it; it = it->next) {
        int w = (int)strlen(it->valuestring) + 2; /* quotes at most */
        if (!first && it->valuestring[0] == '-' && col + 1 + w + 2 > 80) {
            fputs(" \\\n ", f);
            col = 1;
        }
        fputs(first ? "" : " ", f);
        sh_arg(f, it->valuestring);
        col += (first ? 0 : 1) + w;
        first = 0;
    }
    for (const cJSON *it = j->program->child; it; it = it->next) {
        const char *s = it->valuestring;
        /* a new line before each option, for reading */
        fputs(first ? "" : s[0] == '-' || it == j->program->child ? " \\\n  " : " ", f);
        sh_arg(f, s);
        first = 0;
    }
    fputc('\n', f);
    cJSON_Delete(launch);
}

static cJSON *job_json(const launch_job *j, int slurm)
{
    cJSON *s = cJSON_CreateObject();
    if (!s)
        return NULL;
    cJSON_AddNumberToObject(s, "plan_rank", 1);
    cJSON_AddStringToObject(s, "kind", j->kind);
    cJSON_AddStringToObject(s, "framework", plan_framework_get(j->l->framework)->key);
    cJSON_AddBoolToObject(s, "slurm", slurm);
    cJSON *la = cJSON_AddArrayToObject(s, "launcher_argv");
    if (la)
        launcher_argv(j, slurm, la);
    cJSON_AddItemToObject(s, "program_argv", cJSON_Duplicate(j->program, 1));
    cJSON_AddItemToObject(s, "env", cJSON_Duplicate(j->env, 1));
    cJSON_AddItemToObject(s, "files", cJSON_Duplicate(j->files, 1));
    cJSON_AddItemToObject(s, "configs", cJSON_Duplicate(j->configs, 1));
    cJSON *split = cJSON_AddArrayToObject(s, "stage_layers");
    for (int i = 0; split && i < j->l->pp; i++)
        cJSON_AddItemToArray(split, cJSON_CreateNumber(j->stage_layers[i]));
    cJSON_AddNumberToObject(s, "train_steps", (double)j->train_steps);
    cJSON *notes = cJSON_AddArrayToObject(s, "notes");
    for (int i = 0; notes && i < j->nnotes; i++)
        cJSON_AddItemToArray(notes, cJSON_CreateString(j->notes[i]));
    if (j->sources)
        cJSON_AddStringToObject(s, "sources", j->sources);
    return s;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                              */
/* ------------------------------------------------------------------------ */

int launch_check(const char *what, const launch_plan *p, st_err *err)
{
    if (p->r->ntop < 1)
        return ST_RAISE(err, ST_EINVAL, "--emit %s: no plan to emit", what);
    const char *kind;
    int slurm;
    int rc = resolve_kind(what, &p->r->top[0].layout, &kind, &slurm, err);
    if (rc != ST_OK)
        return rc;
    if (smp_kind(kind))
        return smp2_plan(p->r) ? launch__smp2_check(kind, p, err) : launch__smp_check(kind, p, err);
    launch_job j;
    rc = job_make(kind, p, 0, &j, err);
    job_fini(&j);
    return rc;
}

int launch_write(FILE *f, const char *what, const launch_plan *p, st_err *err)
{
    if (p->r->ntop < 1)
        return ST_RAISE(err, ST_EINVAL, "--emit %s: no plan to emit", what);
    const char *kind;
    int slurm;
    int rc = resolve_kind(what, &p->r->top[0].layout, &kind, &slurm, err);
    if (rc != ST_OK)
        return rc;
    if (smp_kind(kind))
        return smp2_plan(p->r) ? launch__smp2_write(f, kind, p, err)
                               : launch__smp_write(f, kind, p, err);
    launch_job j;
    rc = job_make(kind, p, 1, &j, err);
    if (rc == ST_OK)
        write_script(f, &j, slurm);
    job_fini(&j);
    return rc;
}

cJSON *launch_json(const char *what, const launch_plan *p, st_err *err)
{
    if (p->r->ntop < 1) {
        ST_RAISE(err, ST_EINVAL, "--emit %s: no plan to emit", what);
        return NULL;
    }
    const char *kind;
    int slurm;
    if (resolve_kind(what, &p->r->top[0].layout, &kind, &slurm, err) != ST_OK)
        return NULL;
    if (smp_kind(kind))
        return smp2_plan(p->r) ? launch__smp2_json(kind, p, err) : launch__smp_json(kind, p, err);
    launch_job j;
    cJSON *out = NULL;
    if (job_make(kind, p, 1, &j, err) == ST_OK) {
        out = job_json(&j, slurm);
        if (!out)
            ST_RAISE(err, ST_EINVAL, "--emit %s: out of memory", what);
    }
    job_fini(&j);
    return out;
}

const char *launch_kinds(void)
{
    return "launch (the plan's stack's), slurm, sagemaker, mpirun, megatron, deepspeed, "
           "torchtitan, fsdp, maxtext, smdplan";
}

int launch_kind_valid(const char *what)
{
    return !strcmp(what, "launch") || !strcmp(what, "slurm") || smp_kind(what) ||
           launch__kind_known(what);
}
