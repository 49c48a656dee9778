"""Questions to a person: the built-in ``ask_person`` tool and the durable questions
it parks a turn on (see docs/questions.md)."""

from toolang_core.questions.answers import AnswerRefused, BadQuestion
from toolang_core.questions.book import Question, QuestionBook, QuestionError

__all__ = ["AnswerRefused", "BadQuestion", "Question", "QuestionBook", "QuestionError"]
