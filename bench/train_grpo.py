"""TRL's GRPO trainer on synthesized envs through serving.adapters.trl: the loop closes, on CPU, nothing downloaded.

    python bench/train_grpo.py [--catalog DIR] [--envs 2] [--steps 4] [--warmup 500] [--seed 0] [--json]

A tiny Qwen2-architecture model is initialised at random (`--seed`) with a byte-level BPE
tokenizer trained here with `tokenizers` on the envs' own text (instructions, tool schemas, gold
calls) and TRL's shipped Qwen2.5 chat template (so TRL parses its `<tool_call>` blocks). With
`--warmup N`, N steps of plain next-token training on the tasks' gold conversations come first,
so that some completions call tools at all; the GRPO steps then run against `--envs`
synthesized envs (sandboxed; `synthesize` makes them when `--catalog` has none), one env
instance per rollout, rewards from `envforge_reward` (the task's check, `ToolEnv.evaluate`).

It prints the reward per step (TRL's log) and an audit of every scored episode: each is replayed
from its task's start on a fresh `ToolEnv` from its completion's tool calls, and its reward and
final state must equal the trained instance's (the reward is the check's, episodes reset, no state
leaks between the pooled instances). It shows that the loop closes, not that a random model learns.
Needs the `train` extra (trl, torch CPU: `pip install torch==2.13.0 -e ".[train]"`).
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is downloaded: a request would fail, not fetch

from catalog.store import Catalog  # noqa: E402
from serving import make  # noqa: E402
from serving.adapters._tools import final_answer, result_text  # noqa: E402
from serving.adapters.trl import EnvforgeEnvironment, dataset_rows, envforge_reward, environment_factory  # noqa: E402

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
# one token each but not special: TRL decodes completions without special tokens, and its parser needs these
MARKUP = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>"]


def synthesized_catalog(root: Path, envs: int, seed: int) -> tuple[Catalog, list[str]]:
    """The catalog at `root` and its synthesized env ids (synthesizing `envs` there first if it has none)."""
    catalog = Catalog(root, include_reference=False)
    if not catalog.list()[0]:
        from synth.run import RunConfig, synthesize

        synthesize(RunConfig(n=envs, catalog=str(root), workers=1, seed=seed), progress=False)
        catalog = Catalog(root, include_reference=False)
    ids = sorted(s.id for s in catalog.list()[0] if not s.reference)[:envs]
    if not ids:
        raise SystemExit(f"no synthesized env in {root}")
    return catalog, ids


def trainer_tools(factory: type[EnvforgeEnvironment]) -> list[Any]:
    """The tools TRL renders a prompt of `factory`'s env with: its instance's public methods, in TRL's order."""
    instance = factory()
    return [getattr(instance, name) for name, _ in inspect.getmembers(factory, predicate=inspect.isfunction)
            if name not in ("reset", "get_reward") and not name.startswith("_")]


def gold_conversations(catalog: Catalog, factories: dict[str, type[EnvforgeEnvironment]]
                       ) -> list[tuple[list[dict[str, Any]], list[Any]]]:
    """(messages, tools) of each task's gold solution, rendered as TRL renders an episode (tool results included).

    The tools are the trainer's (`trainer_tools`), so the warm-up sees the prompts GRPO then samples from.
    """
    conversations = []
    for env_id, factory in factories.items():
        tools = trainer_tools(factory)
        env = make(env_id, catalog=catalog, terminate_on_success=False)  # one sandbox worker, reset per task
        for task in env.tasks.values():
            instruction, _ = env.reset(options={"task": task.id})
            messages: list[dict[str, Any]] = [{"role": "user", "content": instruction}]
            for action in [] if task.refusal else (task.solution or []):
                observation, *_ = env.step(action.model_dump())
                messages.append({"role": "assistant", "content": "", "tool_calls": [
                    {"type": "function", "function": {"name": action.name, "arguments": action.arguments}}]})
                messages.append({"role": "tool", "name": action.name, "content": result_text(observation)})
            messages.append({"role": "assistant", "content": "I cannot do that." if task.refusal else "Done."})
            conversations.append((messages, tools))
        env.close()
    return conversations


def build_tokenizer(corpus: list[str], vocab: int) -> Any:
    """A byte-level BPE tokenizer trained on `corpus`, with TRL's Qwen2.5 chat template."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast
    from trl.chat_template_utils import qwen2_5_chat_template

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=vocab, special_tokens=SPECIAL,
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKUP])
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    fast.chat_template = qwen2_5_chat_template
    fast.padding_side = "left"
    return fast


def build_model(tokenizer: Any, seed: int) -> Any:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(seed)
    config = Qwen2Config(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8192,
                         tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id,
                         pad_token_id=tokenizer.pad_token_id, bos_token_id=None)
    return Qwen2ForCausalLM(config)


def warm_up(model: Any, tokenizer: Any, conversations: list[tuple[list[dict[str, Any]], list[Any]]],
            steps: int, seed: int) -> float:
    """`steps` of next-token training on the gold conversations' assistant replies (nothing else scored); last loss."""
    import torch

    if steps <= 0:
        return float("nan")
    generator = torch.Generator().manual_seed(seed)
    examples = []
    for messages, tools in conversations:
        def render(upto: int, prompt: bool = False, messages: list[dict[str, Any]] = messages,
                   tools: list[Any] = tools) -> list[int]:
            return list(tokenizer.apply_chat_template(messages[:upto], tools=tools, tokenize=True, return_dict=True,
                                                      add_generation_prompt=prompt)["input_ids"])

        ids = render(len(messages))
        labels = [-100] * len(ids)
        for k, message in enumerate(messages):
            if message["role"] == "assistant":  # the template is prefix-preserving: a reply is what it adds
                start, end = len(render(k, prompt=True)), len(render(k + 1))
                labels[start:end] = ids[start:end]
        examples.append((torch.tensor([ids]), torch.tensor([labels])))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    loss = float("nan")
    for _ in range(steps):
        inputs, targets = examples[int(torch.randint(len(examples), (1,), generator=generator))]
        output = model(input_ids=inputs, labels=targets)
        output.loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        loss = float(output.loss.detach())
    return loss


class Audit:
    """Every episode the reward function scored: env, task, completion, reward, final state."""

    def __init__(self) -> None:
        self.episodes: list[dict[str, Any]] = []

    def reward(self, completions: list[Any], environments: list[Any] | None = None, **kwargs: Any) -> list[float | None]:
        rewards = envforge_reward(completions, environments, **kwargs)
        for completion, env, reward in zip(completions, environments or [], rewards, strict=True):
            assert isinstance(env, EnvforgeEnvironment) and env.env.task is not None
            self.episodes.append({"env_id": env.env_id, "task": env.env.task.id, "completion": completion,
                                  "reward": reward, "state": env.env.state(), "steps": env.env.steps})
        return rewards

    def replay(self, catalog: Catalog, max_steps: int) -> dict[str, Any]:
        """Each episode again on a fresh ToolEnv: same reward, same final state (else a mismatch)."""
        mismatches, calls = [], 0
        for number, episode in enumerate(self.episodes):
            env = make(episode["env_id"], task=episode["task"], catalog=catalog, max_steps=max_steps,
                       terminate_on_success=False)
            env.reset()
            for message in episode["completion"]:
                for call in message.get("tool_calls") or []:
                    if env.steps >= max_steps:
                        break
                    calls += 1
                    function = call["function"]
                    env.step({"name": function["name"], "arguments": function["arguments"]})
            answer, cut_off = final_answer(list(episode["completion"]))
            reward, _ = env.evaluate(answer, cut_off=cut_off)
            if reward != episode["reward"] or env.state() != episode["state"]:
                mismatches.append(number)
            env.close()
        examples = sorted(self.episodes, key=lambda e: (-e["reward"], -e["steps"]))[:3]
        return {"episodes": len(self.episodes), "tool_calls": calls, "mismatches": mismatches,
                "rewarded": sum(e["reward"] == 1.0 for e in self.episodes),
                "examples": [{k: e[k] for k in ("env_id", "task", "reward", "steps", "completion")} for e in examples]}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", default=None, help="catalog folder of synthesized envs (default: a temporary one)")
    parser.add_argument("--envs", type=int, default=2, help="synthesized envs to train on")
    parser.add_argument("--steps", type=int, default=4, help="GRPO steps")
    parser.add_argument("--warmup", type=int, default=500, help="next-token steps on gold conversations first")
    parser.add_argument("--generations", type=int, default=4, help="completions per prompt (GRPO group)")
    parser.add_argument("--max-steps", type=int, default=4, help="tool calls per episode")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print one JSON object at the end")
    options = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    import torch
    from datasets import Dataset
    from transformers import PrinterCallback, TrainerCallback, set_seed
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(1)  # a tiny model: more threads only contend (4-15x slower on a loaded 2-core machine)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="envforge-grpo-") as scratch:
        catalog, env_ids = synthesized_catalog(Path(options.catalog or Path(scratch) / "catalog"), options.envs, options.seed)
        factories = {env_id: environment_factory(env_id, catalog=catalog, max_steps=options.max_steps)
                     for env_id in env_ids}
        rows = dataset_rows(*factories.values())
        conversations = gold_conversations(catalog, factories)
        from transformers.utils import get_json_schema

        corpus = [json.dumps(get_json_schema(t)) for _, tools in conversations for t in tools] + \
                 [json.dumps(m) for messages, _ in conversations for m in messages]
        set_seed(options.seed)
        tokenizer = build_tokenizer(corpus, vocab=2000)
        model = build_model(tokenizer, options.seed)
        warm_loss = warm_up(model, tokenizer, conversations, options.warmup, options.seed)
        audit, log = Audit(), []

        class RewardLog(TrainerCallback):
            def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
                if logs and "reward" in logs:
                    line = {"step": state.global_step, "reward": round(float(logs["reward"]), 4),
                            "reward_std": round(float(logs.get("reward_std", 0.0)), 4),
                            "tool_calls": logs.get("tools/call_frequency"), "episodes": len(audit.episodes)}
                    log.append(line)
                    if not options.json:
                        print(f"step {line['step']}: reward {line['reward']:.4f} (std {line['reward_std']:.4f}),"
                              f" {line['episodes']} episodes scored so far", flush=True)

        batch = options.generations * 2
        config = GRPOConfig(output_dir=str(Path(scratch) / "out"), max_steps=options.steps, learning_rate=1e-4,
                            per_device_train_batch_size=batch, num_generations=options.generations,
                            max_completion_length=96, max_tool_calling_iterations=options.max_steps, temperature=1.0,
                            logging_steps=1, report_to=[], save_strategy="no", use_cpu=True, seed=options.seed,
                            bf16=False, dataloader_num_workers=0, disable_tqdm=True)
        factory: Any = factories if len(factories) > 1 else next(iter(factories.values()))
        trainer = GRPOTrainer(model=model, reward_funcs=audit.reward, args=config,
                              train_dataset=Dataset.from_list(rows), processing_class=tokenizer,
                              environment_factory=factory,
                              callbacks=[RewardLog()])
        trainer.remove_callback(PrinterCallback)  # TRL's own log dicts: the reward log above says what matters
        trainer.train()
        replay = audit.replay(catalog, options.max_steps)
    result = {"envs": env_ids, "tasks": len(rows), "steps": options.steps, "warmup_steps": options.warmup,
              "warmup_loss": round(warm_loss, 4), "parameters": sum(p.numel() for p in model.parameters()),
              "vocab": len(tokenizer), "reward_log": log, "replay": replay,
              "wall_s": round(time.perf_counter() - started, 1)}
    if options.json:
        print(json.dumps(result))
    else:
        print(f"replayed {replay['episodes']} episodes ({replay['tool_calls']} tool calls, {replay['rewarded']} "
              f"rewarded): {len(replay['mismatches'])} mismatches; {result['wall_s']} s")
    return result


if __name__ == "__main__":
    main()
