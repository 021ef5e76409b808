#!/usr/bin/env bash
# test_cli_plan.sh: the smdplan plan command end to end.
#   $1 smdplan binary, $2 source dir, $3 fixtures dir
# Checks the SageMaker reference configurations (GPT-2 style, seq 512, vocab
# 50000; smp-best-practices) are feasible as fixed layouts and that the
# planner's own picks keep TP inside a node; bad input exits 2 with one line;
# a model that fits nowhere exits 3 and says how many instances it needs;
# smdplan validate on the published runs stays within its bound (see below).
. "$(dirname "$0")/lib.sh"

# The three SMP reference configurations, evaluated as fixed layouts.
run smp-10b 0 "$bin" --params 10B --family smp --instances 16xp4d --tp 4 --pp 1 --dp 32 \
  --batch-size 40 --recompute full --sharding optimizer --prescaled-batch on --no-record
run smp-30b 0 "$bin" --params 30B --family smp --instances 16xp4d --tp 8 --pp 1 --dp 16 \
  --batch-size 32 --recompute full --sharding optimizer --prescaled-batch on --no-record
run smp-60b 0 "$bin" --params 60B --family smp --instances 32xp4d --tp 8 --pp 2 --dp 16 \
  --batch-size 56 --microbatches 4 --active-microbatches 2 --recompute full --sharding optimizer \
  --prescaled-batch on --no-record

# The planner's own picks for those cases keep TP inside a node (tp <= 8 on p4d).
for case in "10B 16xp4d 1280" "30B 16xp4d 512" "60B 32xp4d 896"; do
  set -- $case
  "$bin" --params "$1" --family smp --instances "$2" --global-batch "$3" --json --no-record >"$tmp/j" 2>"$tmp/err"
  if ! grep -q '"tp":' "$tmp/j"; then echo "FAIL pick-$1: no plan"; cat "$tmp/err"; fail=1; continue; fi
  tp=$(grep -m1 '"tp":' "$tmp/j" | tr -dc 0-9)
  if [ "$tp" -gt 8 ]; then echo "FAIL pick-$1: tp $tp crosses nodes"; fail=1; else echo "ok   pick-$1 (tp $tp)"; fi
done

# The main job and its outputs.
run main 0 "$bin" --params 30B --instances 16xp4d --no-record
grep -q "Why #1" "$tmp/out" || { echo "FAIL main: no 'Why #1' sentence"; fail=1; }
run json 0 "$bin" --params 30B --instances 16xp4d --json --no-record
for key in '"micro_batch"' '"active_microbatches"' '"memory_per_gpu_bytes"' '"step_time_s"' \
           '"tokens_per_s"' '"mfu"' '"cost_per_hour"' '"sharding"' '"placement"'; do
  grep -q "$key" "$tmp/out" || { echo "FAIL json: missing $key"; fail=1; }
done
run explain 0 "$bin" --params 30B --instances 16xp4d --explain --top 1 --no-record
grep -q "Korthikanti" "$tmp/out" || { echo "FAIL explain: no sources"; fail=1; }
run emit-sagemaker 0 "$bin" --params 30B --instances 16xp4d --emit sagemaker --no-record
grep -q '"tensor_parallel_degree"' "$tmp/out" || { echo "FAIL emit: no tensor_parallel_degree"; fail=1; }
grep -q '"processes_per_host": 8' "$tmp/out" || { echo "FAIL emit: processes_per_host"; fail=1; }
run emit-mpirun 0 "$bin" --params 30B --instances 16xp4d --emit mpirun --no-record
grep -q "mpirun -np 128" "$tmp/out" || { echo "FAIL emit mpirun"; fail=1; }
run help 0 "$bin" --help
run version 0 "$bin" --version

# Bad input: one line, exit 2.
run bad-params 2 "$bin" --params 30X --instances 16xp4d;      one_line bad-params "30X"
run neg-count 2 "$bin" --params 30B --instances=-3xp4d;       one_line neg-count "3xp4d"
run zero-tp 2 "$bin" --params 30B --instances 16xp4d --tp 0;  one_line zero-tp "tp"
run unknown-inst 2 "$bin" --params 30B --instances 16xp9z;    one_line unknown-inst "p9z"
run heads-tp 2 "$bin" --params 30B --instances 16xp4d --heads 7 --tp 2 --hidden 7168; one_line heads-tp "heads"
run huge 2 "$bin" --params 30B --instances 16xp4d --layers 1e12; one_line huge "layers"
run bad-sched 2 "$bin" --params 30B --instances 16xp4d --schedule foo; one_line bad-sched "foo"
run unknown-opt 2 "$bin" --params 30B --bogus;                 one_line unknown-opt "bogus"

# Fits nowhere on this cluster: an answer, exit 3, with the count it needs.
run nofit 3 "$bin" --params 1T --instances 1xp4d --no-record
grep -q "would need at least" "$tmp/out" || { echo "FAIL nofit: no instance count"; cat "$tmp/out"; fail=1; }
# A fixed layout that does not fit: exit 3, by how much and where.
run fixed-oom 3 "$bin" --params 30B --family smp --instances 16xp4d --tp 1 --pp 1 --dp 128 \
  --micro-batch 8 --recompute none --sharding none --global-batch 1024 --no-record
grep -q "GiB" "$tmp/out" || { echo "FAIL fixed-oom: no size"; fail=1; }

# The stacks by release (data/frameworks.json): listed; one release's values
# with the entry each comes from and its source; a release picked by key,
# a bare stack its latest; an unknown one refused in one line.
run frameworks 0 "$bin" frameworks
for k in "smp@v1 \*" megatron@2020 megatron@2021 megatron@2022 megatron@2024 megatron@2025 nemo@2023 nemo@2025 fsdp@2024 \
  llm-foundry@2023 torchtitan@2024 smdplan-cuda; do
  grep -q "^$k" "$tmp/out" || { echo "FAIL frameworks: no '$k'"; fail=1; }
done
run frameworks-key 0 "$bin" frameworks megatron@2022
grep -q "sequence_parallel *true -- Korthikanti" "$tmp/out" || { echo "FAIL frameworks-key: sequence_parallel"; fail=1; }
grep -q 'attention *"unfused" (from megatron@2020)' "$tmp/out" || { echo "FAIL frameworks-key: attention"; fail=1; }
run frameworks-json 0 "$bin" frameworks --json
grep -q '"key":[[:space:]]*"nemo@2024"' "$tmp/out" || { echo "FAIL frameworks-json"; fail=1; }
run frameworks-bad 2 "$bin" frameworks megatron@1999
one_line frameworks-bad "megatron@1999"
run release 0 "$bin" --params 175B --instances 128xp4de --framework megatron@2022 --no-record --no-sim --explain
grep -q "stack: *Megatron-LM 2022" "$tmp/out" || { echo "FAIL release: stack"; fail=1; }
grep -q "TP communication  *[1-9]" "$tmp/out" || { echo "FAIL release: no TP communication"; fail=1; }
run latest 0 "$bin" --params 30B --instances 4xp5 --framework megatron --no-record --no-sim
grep -q "framework megatron@2025" "$tmp/out" || { echo "FAIL latest: not megatron@2025"; fail=1; }
run bad-release 2 "$bin" --params 30B --instances 4xp5 --framework megatron@2019 --no-record
one_line bad-release "megatron@2019"
# A stack smdplan reads runs of but launches nothing for plans as any other
# and refuses --emit in one line saying so, writing nothing.
run nanotron 0 "$bin" --params 8B --instances 4xp5 --framework nanotron --no-record --no-sim
grep -q "stack: *Nanotron" "$tmp/out" || { echo "FAIL nanotron: stack"; fail=1; }
run nanotron-emit 2 "$bin" --params 8B --instances 4xp5 --framework nanotron --no-record --no-sim --emit launch
one_line_error nanotron-emit "not one it launches"
# torch.compile: a knob of the stacks that have it (torchtitan), written
# into the launch as its own key; refused in one line elsewhere.
run compile 0 "$bin" --params 8B --arch llama --instances 1xp5 --framework torchtitan --compile on --no-record --no-sim --emit launch
grep -q "^compile = true" "$tmp/out" || { echo "FAIL compile: no compile = true"; fail=1; }
run compile-bad 2 "$bin" --params 8B --arch llama --instances 1xp5 --framework megatron --compile on --no-record --no-sim
one_line_error compile-bad "no torch.compile knob"
# TP overlap as each stack has it: torchtitan's async TP (compiled) written
# into the launch as its own key; refused without torch.compile, and on a
# stack whose overlap stops short of it, in one line.
run async-tp 0 "$bin" --params 70B --arch llama --instances 8xp5 --framework torchtitan --tp 8 --tp-overlap on --compile on --no-record --no-sim --emit launch
grep -q "^enable_async_tensor_parallel = true" "$tmp/out" || { echo "FAIL async-tp: no key"; fail=1; }
run async-tp-eager 2 "$bin" --params 70B --arch llama --instances 8xp5 --framework torchtitan --tp 8 --tp-overlap on --no-record --no-sim
one_line_error async-tp-eager "needs torch.compile"
# torchtitan's layer-wise checkpointing: the plan's recomputed layers per
# chunk written as selective_ac_option N (one layer in N), refused where
# the count does not divide a chunk's layers.
run every-layer 0 "$bin" --params 8B --arch llama --instances 1xp5 --framework torchtitan --pp 1 --global-batch 16 --recompute full --recompute-layers 16 --compile on --no-record --no-sim --emit launch
grep -q '^selective_ac_option = "2"' "$tmp/out" || { echo "FAIL every-layer: no option 2"; fail=1; }
run every-layer-bad 2 "$bin" --params 8B --arch llama --instances 1xp5 --framework torchtitan --pp 1 --global-batch 16 --recompute full --recompute-layers 30 --no-record --no-sim --emit launch
one_line_error every-layer-bad "must divide"
run tp-overlap-bad 2 "$bin" --params 70B --arch llama --instances 8xp5 --framework megatron@2022 --tp 8 --tp-overlap on --no-record --no-sim
one_line_error tp-overlap-bad "takes off, bwd"

# The published runs: mean over sources of each source's mean |time error|.
# The goal is 5 % (README); this bound is the figure the shipped catalog and
# model reach now, so a change that makes the predictions worse fails here.
# Lower it whenever the figure improves; raise it only with a reason in the
# commit that does. (Raised from 5.0 to 7.0 when every timed row came to be
# scored, a run the planner calls out of memory included, and stacks with
# fewer than three sources lost their own fits to the chip's pool: 6.9 %.)
validate_bound=7.0
run validate 0 "$bin" validate "$src/data/reference/calibration_runs.csv" --json --no-record
awk -v b="$validate_bound" '/"mean_source_abs_error_pct"/ { gsub(/[",]/, ""); v = $2 } END { exit !(v != "" && v + 0 <= b) }' \
  "$tmp/out" || { echo "FAIL validate: mean over sources above $validate_bound %"; grep '"mean_source_abs_error_pct"' "$tmp/out" | tail -1; fail=1; }
# Models by name, offline: the published config (data/hf_models.json), a
# local file of the same name first; an unknown name is one line naming the
# closest; --seq still overrides the training length.
run named-model 0 "$bin" --model meta-llama/Llama-3.1-70B --instances 16xp5 --framework megatron --no-sim
grep -q "^model:   meta-llama/Llama-3.1-70B, 70.6B parameters (70553706496 exact)" "$tmp/out" \
  || { echo "FAIL named-model: not Llama 3.1 70B"; head -2 "$tmp/out"; fail=1; }
grep -q "seq 8192" "$tmp/out" || { echo "FAIL named-model: not its training length"; fail=1; }
run named-seq 0 "$bin" --model Qwen2.5-7B --seq 32768 --instances 2xp5 --no-sim --framework megatron
grep -q "seq 32768" "$tmp/out" || { echo "FAIL named-seq: --seq not applied"; fail=1; }
run named-unknown 2 "$bin" --model meta-llama/Llama-3.1-7B --instances 2xp5
one_line named-unknown "closest: meta-llama/Llama-3.1-"
# Gemma 2: heads of 256 on hidden 3584 (head_dim), a 4096-token window on
# every other layer; Megatron-LM's launch carries the head size
# (--kv-channels) and the window (--window-size, --window-attn-skip-freq);
# a stack that cannot say either refuses in one line, as does the executor.
run named-gemma 0 "$bin" --model google/gemma-2-9b --instances 2xp4d --no-record
grep -q "^model:   google/gemma-2-9b, 9.24B parameters .*16 heads (8 kv) of 256, .*sliding window 4096 on 21 of 42 layers" \
  "$tmp/out" || { echo "FAIL named-gemma: not Gemma 2 9B's shape"; head -1 "$tmp/out"; fail=1; }
run gemma-megatron 0 "$bin" --model google/gemma-2-9b --instances 2xp4d --framework megatron \
  --emit launch --no-record
for want in "--kv-channels 256" "--num-attention-heads 16" "--window-size 4095,0" \
            "--window-attn-skip-freq 2"; do
  grep -q -- "$want" "$tmp/out" || { echo "FAIL gemma-megatron: no '$want'"; fail=1; }
done
grep -q -- "--untie-embeddings-and-output-weights" "$tmp/out" && { echo "FAIL gemma-megatron: untied"; fail=1; }
run gemma-file 0 "$bin" --model "$fix/hf_gemma2_9b.json" --instances 2xp4d --json --no-record
grep -q '"head_dim":[[:space:]]*256' "$tmp/out" && grep -q '"sliding_window":[[:space:]]*4096' "$tmp/out" \
  && grep -q '"sliding_window_pattern":[[:space:]]*2' "$tmp/out" \
  || { echo "FAIL gemma-file: head_dim or window not read"; fail=1; }
run gemma-titan 2 "$bin" --model google/gemma-2-9b --instances 2xp4d --framework torchtitan \
  --emit launch --no-record
one_line gemma-titan "head size 256"
run gemma-exec 2 "$bin" exec --model google/gemma-2-9b --instances 1xp4d --dry-run
one_line gemma-exec "head size 256 is not hidden / heads"
# recorded and read back (schema version 6): show says the head size and
# the window as the plan's model line does
run gemma-record 0 "$bin" --model google/gemma-2-9b --instances 2xp4d --db "$tmp/g.db"
run gemma-show 0 "$bin" show 1 --db "$tmp/g.db" --wide
grep -q "16 heads (kv 8) of 256, .*sliding window 4096 on 21 of 42 layers" "$tmp/out" \
  || { echo "FAIL gemma-show: no head size or window"; grep "^model" "$tmp/out"; fail=1; }
run head-dim-flag 0 "$bin" --params 1.3B --instances 1xp4d --head-dim 96 --json --no-record
grep -q '"head_dim":[[:space:]]*96' "$tmp/out" || { echo "FAIL head-dim-flag: not applied"; fail=1; }
run head-dim-zero 2 "$bin" --params 1.3B --instances 1xp4d --head-dim 0
one_line head-dim-zero "--head-dim"
run head-dim-text 2 "$bin" --params 1.3B --instances 1xp4d --head-dim wide
one_line head-dim-text "--head-dim"
printf '{"model_type": "gemma2", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "head_dim": 0, "intermediate_size": 128, "max_position_embeddings": 128, "vocab_size": 100}\n' >"$tmp/bad_head.json"
run head-dim-config 2 "$bin" --model "$tmp/bad_head.json" --instances 1xp4d
one_line head-dim-config "head_dim 0"
run models 0 "$bin" models --json
grep -q "mosaicml/mpt-30b" "$tmp/out" || { echo "FAIL models: no list"; fail=1; }
run launch-blocking 2 "$bin" --params 30B --instances 16xp4d --launch-blocking maybe
one_line launch-blocking "launch-blocking"

exit $fail
