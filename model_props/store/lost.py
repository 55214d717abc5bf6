"""The tasks a session ran ahead of its tests that killed every worker that ran them (Dask's ``KilledWorker``, once
a task's allowed failures are spent: a native abort, such as the CUDA one of the ResNet's Hessian spectrum seen on
an H100, or a worker out of memory), and the one-line error each test that needs one gets in its place. Run again
in the test process, such a task would end that process too, and with it every test after it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ExecutorError
from ..training.recipes import Recipe
from .tested import ModelUnderTest

__all__ = ["LostTasks", "killed", "report_task", "training_task"]

INSTEAD = "what needs it fails in one line instead of running it in this process"
# with one worker, the task runs in the process that asks for it, where its failure shows
HOW_TO_SEE = "run it alone on one worker (pytest --claims-workers=1, model-props train --workers 1) to see the failure"


def training_task(recipe: Recipe) -> str:
    """A training task in words, as a session and a study name it: "training vit (seed 0)"."""
    return f"training {recipe.name} (seed {recipe.seed})"


def report_task(request: tuple[int, str, str, str]) -> str:
    """A report task ``(seed, name, kind, checkpoint)`` in words: "measuring the fit report of vit (seed 0, final)"."""
    seed, name, kind, checkpoint = request
    return f"measuring the {kind} report of {name} (seed {seed}, {checkpoint})"


def killed(task: str) -> str:
    """That ``task`` (:func:`training_task`, :func:`report_task`) killed every worker that ran it: the words a
    session and a study begin their line with."""
    return f"{task} killed every worker that ran it"


def _said(why: str, error: BaseException) -> str:
    """The line a session says of a lost task: ``why`` (:func:`killed`), the error's name, and what follows."""
    return f"{why} ({type(error).__name__}); {INSTEAD}: {HOW_TO_SEE}"


@dataclass
class LostTasks:
    """What was lost, by ``(recipe name, training seed)`` for a training run and by its request ``(training seed,
    recipe name, report kind, checkpoint)`` for a report; each with its one-line reason."""

    trainings: dict[tuple[str, int], str] = field(default_factory=dict)
    reports: dict[tuple[int, str, str, str], str] = field(default_factory=dict)

    def training(self, recipe: Recipe, error: BaseException) -> str:
        """Record that training ``recipe`` killed its workers (``error``); the line the session says."""
        why = self.trainings[(recipe.name, recipe.seed)] = killed(training_task(recipe))
        return _said(why, error)

    def report(self, request: tuple[int, str, str, str], error: BaseException) -> str:
        """Record that measuring ``request`` ((seed, name, kind, checkpoint)) killed its workers; the line said."""
        why = self.reports[request] = killed(report_task(request))
        return _said(why, error)

    def check_training(self, recipe: Recipe) -> None:
        """Refuse, in one line, to train ``recipe`` in this process where training it killed the workers."""
        if (why := self.trainings.get((recipe.name, recipe.seed))) is not None:
            raise ExecutorError(f"{why}: not run again in this process, which it would end too; {HOW_TO_SEE}")

    def check_report(self, tested: ModelUnderTest, kind: str) -> None:
        """Refuse, in one line, to measure ``tested``'s ``kind`` report where measuring it killed the workers (a
        mutant is another model: its reports are not refused)."""
        recipe = tested.recipe
        if recipe is None or tested.mutation is not None:
            return
        if (why := self.reports.get((recipe.seed, recipe.name, kind, tested.training_state))) is not None:
            raise ExecutorError(f"{why}: not measured again in this process, which it would end too; {HOW_TO_SEE}")
