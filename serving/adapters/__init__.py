"""Envforge envs for the trainers people use, one small module per trainer over `serving.gym`.

    serving.adapters.trl        TRL's GRPOTrainer `environment_factory` (+ its reward function)
    serving.adapters.skyrl      a SkyRL-gym `BaseTextEnv`
    serving.adapters.verifiers  a verifiers `StatefulToolEnv` (`load_environment`)
    serving.adapters.openenv    an OpenEnv env server and client

Each adapter drives `ToolEnv` (make / reset / step / evaluate): no second runtime, the same
sandbox, the same checks and the same rule for passing an episode (catalog.tasks.episode_passed).
Nothing is imported here: `import serving` never needs a trainer library, and each adapter
imports only its own.
"""
