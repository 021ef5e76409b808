/*
 * data_model_ref.h: a model named the way a user names one: a Hugging Face
 * config.json by path, or a widely used open model by name, offline
 * (data/hf_models.json: meta-llama/Llama-3.1-70B, Qwen/Qwen2.5-72B, ...).
 */
#ifndef SMD_DATA_MODEL_REF_H
#define SMD_DATA_MODEL_REF_H

#include "data/data.h"

/* Load ref into m, finished. ref is read as a name ("org/model" or "model":
 * no path of its own, not ending in .json) when no file of that name
 * exists (data_hf_named_load), else as the path of a config.json
 * (data_hfconfig_load); their status codes. */
int data_model_ref_load(const char *ref, plan_model *m, st_err *err);

#endif
