"""The cooperative deadline a photo job runs under (``vision.deadline``), for the shell that gives each job one
(the service's runner): the pipeline checks it between model runs and raises :class:`WorkCancelled` past it."""

from vision.deadline import Deadline, WorkCancelled

__all__ = ["Deadline", "WorkCancelled"]
