/*
 * data_known_models.h: the models a published run may name without its
 * shape, for smdplan validate and calibrate (planner/plan_validate.h,
 * plan_known_model): the presets of data/models.json by their keys
 * ("gpt3-175b", "llama2-70b") and the configs of data/hf_models.json by
 * their ids and aliases ("meta-llama/Llama-2-70b-hf", "llama-2-70b").
 */
#ifndef SMD_DATA_KNOWN_MODELS_H
#define SMD_DATA_KNOWN_MODELS_H

#include "common/st.h"

/* Read both files from data_dir() and install their models
 * (plan_known_models_set). The files' own status codes; nothing is
 * installed on error. */
int data_known_models_load(st_err *err);

#endif
