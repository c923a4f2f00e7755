"""Running jobs: one job as a command asks for it (job_request), its stages and the runner that takes
them in turn (stages, pipeline), batches (batch, batch_file, ray_runner), where outputs and work go
(outputs, work_folder, work_cache), its inputs checked (input_files), progress and measures
(progress, metering, metrics)."""
