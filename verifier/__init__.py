"""Checking envs and simulators against real execution, by job.

- `verifier.gate`: the quality gate (property checks, intent, guards, mutation testing);
- `verifier.audit`: simulator audits on benchmark samples (FM/CM metrics, resumable results);
- `verifier.samples`: verified benchmark samples, exported by stratum;
- `verifier.simaudit`: property-based simulator audits with shrunk counterexamples;
- `verifier.replay`: call files replayed against an env.

Executes through the layers below it (serving, executors, sandbox) and reads `constraints` and
`catalog`; nothing below imports it.
"""
