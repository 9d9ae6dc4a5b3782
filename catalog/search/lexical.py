"""BM25 over the words that name an env (bm25s), the lexical half of catalog search.

The sentence embedding alone misses the obvious: with a 64-d static model "hotel" lands nearer
a smart-home env than the hotel envs. BM25 scores the query's words against each env's name,
topic, description and tool names (`check_in_booking` as "check in booking"), English
stopwords dropped and words stemmed with Snowball ("bookings" and "booking" match), so a word
that names an env finds it. `bm25s` (numpy only) does the scoring and `snowballstemmer` (pure
Python) the stemming; both are imported on first use.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from catalog.models import EnvManifest

__all__ = ["LexicalIndex", "lexical_text", "tokenize"]

_SEPARATORS = re.compile(r"[_/\-]+")


def lexical_text(manifest: EnvManifest) -> str:
    """What BM25 reads of an env: name, topic, description and tool names, separators as spaces.

    >>> from catalog.models import ToolDescriptor
    >>> lexical_text(EnvManifest(id="x", name="Hotel", kind="sql", entry="E", topic="travel/hotels",
    ...                          description="Guests book rooms.", tools=[ToolDescriptor(name="check_in_booking")]))
    'Hotel. travel hotels. Guests book rooms.. check in booking'
    """
    tools = " ".join(tool.name for tool in manifest.tools)
    return _SEPARATORS.sub(" ", ". ".join(part for part in (manifest.name, manifest.topic, manifest.description, tools)
                                          if part.strip()))


@functools.cache
def _stem_words() -> Any:
    import snowballstemmer

    return snowballstemmer.stemmer("english").stemWords


def tokenize(texts: Sequence[str]) -> list[list[str]]:
    """Lower-cased, stopword-free, stemmed word tokens per text (bm25s's tokenizer, Snowball's stems).

    >>> tokenize(["Hotel room bookings", "the check_in tool"])
    [['hotel', 'room', 'book'], ['check', 'tool']]
    """
    import bm25s

    cleaned = [_SEPARATORS.sub(" ", str(text)) for text in texts]
    tokens = bm25s.tokenize(cleaned, stopwords="en", stemmer=_stem_words(), return_ids=False, show_progress=False)
    return [list(row) for row in tokens]


class LexicalIndex:
    """BM25 (Lucene's variant, bm25s's default) over one text per id; `scores` gives one score per id.

    >>> index = LexicalIndex(["hotel", "home"], ["Hotel front desk: guests book rooms", "Smart home hub: devices"])
    >>> [round(float(s), 3) for s in index.scores("hotel room bookings")]
    [0.763, 0.0]
    >>> index.scores("nothing matches").tolist(), index.scores("").tolist()
    ([0.0, 0.0], [0.0, 0.0])
    """

    def __init__(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        import bm25s

        if len(ids) != len(texts):
            raise ValueError(f"{len(ids)} ids for {len(texts)} texts")
        self.ids = list(ids)
        corpus = tokenize(texts)
        self._retriever: Any = None
        if any(corpus):
            self._retriever = bm25s.BM25()
            self._retriever.index(corpus, show_progress=False)

    def scores(self, query: str) -> np.ndarray:
        """BM25 of `query` against every id's text, in id order (0 where no query word occurs)."""
        if self._retriever is None:
            return np.zeros(len(self.ids), dtype=np.float32)
        vocabulary = self._retriever.vocab_dict
        words = [word for word in tokenize([query])[0] if word in vocabulary]
        if not words:
            return np.zeros(len(self.ids), dtype=np.float32)
        return np.asarray(self._retriever.get_scores(words), dtype=np.float32)
