"""A job's process: ``spawner`` the one place child processes start, ``wrap`` the per-job
wrapper process (run by its file path, importing nothing of the package), ``runner`` one running
job's log and process."""
