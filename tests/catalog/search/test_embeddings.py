"""Offline embeddings, the faiss vector index, topic dedup and k-means."""

import json
import subprocess
import sys
import threading
import warnings
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import catalog.search.embeddings as embeddings
from catalog.search.embeddings import (
    EmbedderUnavailable,
    EndpointEmbedder,
    HashingEmbedder,
    StaticModelEmbedder,
    default_embedder,
    get_embedder,
    set_default_embedder,
)
from catalog.search.vectors import DedupFilter, VectorIndex, kmeans, near_duplicates

HOTEL = "Hotel front desk: guests book rooms, check in and out, and are billed for their stays."
HOTEL_PARAPHRASE = "A hotel's front desk books rooms for guests, checks them in and out, and bills their stays."
LIBRARY = "Lending library circulation desk: members borrow, renew, reserve and return books; late returns are fined."
LIBRARY_PARAPHRASE = ("The circulation desk of a lending library: members borrow, renew, reserve and return books; "
                      "late returns and lost copies are fined.")
PAYROLL = "Payroll office: employees are paid salaries each period with tax withholdings and bonuses."
PERMITS = "City permit office: residents apply for building permits, inspectors approve or reject them after inspection."


@pytest.fixture(scope="module")
def static():
    return StaticModelEmbedder()


# --- the embedded static model ----------------------------------------------------------------
def test_static_model_is_64d_named_and_normalized(static):
    vectors = static.embed([HOTEL, LIBRARY, "x", ""])
    assert static.dim == 64 and vectors.shape == (4, 64) and vectors.dtype == np.float32
    assert static.name.startswith("tokenlearn-static-model==")
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, atol=1e-5)
    assert not vectors[3].any()  # an empty text is a zero row: cosine 0 with everything
    assert static.embed([]).shape == (0, 64)


def test_same_text_same_vector_whatever_the_batch(static):
    alone = static.embed([LIBRARY])[0]
    in_batch = static.embed([HOTEL, "something else entirely " * 40, LIBRARY])[2]
    assert np.array_equal(alone, in_batch) and np.array_equal(alone, static.embed([LIBRARY])[0])


def test_same_vector_in_another_process(static):
    code = ("import json; from catalog.search.embeddings import StaticModelEmbedder; "
            f"print(json.dumps(StaticModelEmbedder().embed([{LIBRARY!r}])[0].tolist()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert np.array_equal(np.asarray(json.loads(out.stdout), dtype=np.float32), static.embed([LIBRARY])[0])


def test_case_and_whitespace_do_not_matter(static):
    a, b = static.embed(["Lending LIBRARY:  members borrow books", "lending library: members\nborrow books"])
    assert np.array_equal(a, b)


def test_embed_rejects_a_bare_string(static):
    with pytest.raises(TypeError, match="sequence"):
        static.embed(HOTEL)


@pytest.mark.parametrize(("text", "paraphrase", "unrelated"), [
    (HOTEL, HOTEL_PARAPHRASE, LIBRARY),
    (LIBRARY, LIBRARY_PARAPHRASE, PAYROLL),
    (PERMITS, "Residents apply to the city for building permits; inspectors inspect, then approve or reject them.",
     HOTEL),
])
def test_paraphrase_is_closer_than_unrelated_text(static, text, paraphrase, unrelated):
    v = static.embed([text, paraphrase, unrelated])
    close, far = float(v[0] @ v[1]), float(v[0] @ v[2])
    # Observed: paraphrases 0.85-0.97; distinct env descriptions 0.3-0.79 (mean about 0.5).
    assert close >= 0.85 and far < 0.8 and close - far > 0.15


# --- the hashing fallback ---------------------------------------------------------------------
def test_hashing_embedder_is_deterministic_normalized_and_lexical():
    hashing = HashingEmbedder(dim=256)
    v = hashing.embed([LIBRARY, LIBRARY_PARAPHRASE, PAYROLL, ""])
    assert v.shape == (4, 256) and np.array_equal(v, HashingEmbedder(dim=256).embed([LIBRARY, LIBRARY_PARAPHRASE,
                                                                                     PAYROLL, ""]))
    assert np.allclose(np.linalg.norm(v[:3], axis=1), 1.0, atol=1e-5) and not v[3].any()
    assert v[0] @ v[1] > 0.8 > 0.3 > v[0] @ v[2]
    assert hashing.name != HashingEmbedder(dim=512).name


# --- choosing the embedder --------------------------------------------------------------------
@pytest.fixture
def fresh_default(monkeypatch):
    monkeypatch.delenv(embeddings.ENV_VAR, raising=False)
    embeddings._cached.cache_clear()
    set_default_embedder(None)
    yield
    embeddings._cached.cache_clear()
    set_default_embedder(None)


def test_default_embedder_is_the_static_model_cached_per_process(fresh_default):
    first = default_embedder()
    assert isinstance(first, StaticModelEmbedder) and default_embedder() is first


def test_default_embedder_can_be_chosen_or_overridden(fresh_default, monkeypatch):
    monkeypatch.setenv(embeddings.ENV_VAR, "hashing")
    assert isinstance(default_embedder(), HashingEmbedder)
    custom = HashingEmbedder(dim=32)
    set_default_embedder(custom)
    assert default_embedder() is custom
    with pytest.raises(ValueError, match="unknown embedder"):
        get_embedder("word2vec")


def test_missing_model_falls_back_to_hashing_with_a_warning(fresh_default, monkeypatch):
    monkeypatch.setitem(sys.modules, "static_model", None)  # import static_model now raises ImportError
    with pytest.raises(EmbedderUnavailable, match="tokenlearn-static-model"):
        get_embedder("static")
    with pytest.warns(RuntimeWarning, match="HashingEmbedder"):
        chosen = default_embedder()
    assert isinstance(chosen, HashingEmbedder)


# --- an OpenAI-compatible endpoint ------------------------------------------------------------
class _Embeddings(BaseHTTPRequestHandler):
    requests: list = []

    def do_POST(self):  # noqa: N802 - the http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append((self.path, body))
        data = [{"object": "embedding", "index": i,
                 "embedding": [float((zlib.crc32(text.encode()) >> s) % 7 + 1) for s in range(0, 24, 3)]}
                for i, text in enumerate(body["input"])]
        payload = json.dumps({"object": "list", "model": body["model"], "data": data[::-1],  # out of order on purpose
                              "usage": {"prompt_tokens": 3, "total_tokens": 3}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


def test_endpoint_embedder_with_the_openai_client():
    _Embeddings.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        embedder = EndpointEmbedder(f"http://127.0.0.1:{server.server_port}/v1", "tiny-embed", api_key_env=None,
                                    batch_size=2, timeout=10, max_retries=0)
        v = embedder.embed(["alpha", "beta", "", "alpha"])
        assert embedder.dim == 8 and v.shape == (4, 8) and embedder.name.startswith("endpoint:tiny-embed@")
        assert np.allclose(np.linalg.norm(v[[0, 1, 3]], axis=1), 1.0, atol=1e-5) and not v[2].any()
        assert np.array_equal(v[0], v[3]) and not np.array_equal(v[0], v[1])
        assert [p for p, _ in _Embeddings.requests] == ["/v1/embeddings"] * 2
        assert [b["input"] for _, b in _Embeddings.requests] == [["alpha", "beta"], [" ", "alpha"]]
    finally:
        server.shutdown()
        server.server_close()


# --- VectorIndex --------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrays(np.float32, st.tuples(st.integers(1, 25), st.integers(2, 12)),
              elements=st.floats(-1, 1, width=32, allow_subnormal=False)), st.data())
def test_search_of_an_added_vector_returns_itself_first(matrix, data):
    assume(bool((np.linalg.norm(matrix, axis=1) > 1e-2).all()))
    index = VectorIndex(matrix.shape[1])
    ids = [f"v{i}" for i in range(len(matrix))]
    index.add(ids, matrix)
    row = data.draw(st.integers(0, len(matrix) - 1))
    found, scores = index.search(matrix[row:row + 1], len(matrix))
    assert scores[0, 0] == pytest.approx(1.0, abs=1e-4)
    # Equal (parallel) vectors tie: the id must be among the best-scoring ones.
    assert ids[row] in [i for i, s in zip(found[0], scores[0], strict=True) if s >= scores[0, 0] - 1e-5]
    assert index.max_similarity(matrix[row]) == pytest.approx(1.0, abs=1e-4)


def test_index_basics_and_round_trip():
    index = VectorIndex(3)
    assert index.nearest([1, 0, 0]) == (None, -1.0) and index.search([[1, 0, 0]], 5)[0] == [[]]
    index.add(["x", "y", "z"], [[2, 0, 0], [0, 3, 0], [1, 1, 0]])
    assert "y" in index and len(index) == 3 and np.allclose(index.vector("x"), [1, 0, 0])
    with pytest.raises(ValueError, match="already"):
        index.add(["x"], [[0, 0, 1]])
    with pytest.raises(ValueError, match="3-d"):
        index.add(["w"], [[0, 1]])
    ids, scores = index.search([[1, 0, 0]], 10)
    assert ids == [["x", "z", "y"]] and scores.shape == (1, 3)
    assert [i for i, _ in index.range_search([[1, 0, 0]], 0.7)[0]] == ["x", "z"]
    clone = VectorIndex.from_bytes(index.to_bytes(), index.ids)
    assert clone.ids == index.ids and np.array_equal(clone.vectors(), index.vectors())
    with pytest.raises(ValueError):
        VectorIndex.from_bytes(b"not a faiss index", ["x"])
    with pytest.raises(ValueError):
        VectorIndex.from_bytes(index.to_bytes(), ["x"])


# --- dedup --------------------------------------------------------------------------------------
def test_dedup_filter_rejects_near_duplicates_and_accepts_distinct_topics(static):
    dedup = DedupFilter(static, threshold=0.85)
    dedup.add(["library"], [LIBRARY])  # what the catalog already holds
    accepted, nearest, similarity = dedup.accept("hotel", HOTEL)
    assert accepted and nearest == "library" and similarity < 0.85
    assert dedup.accept("payroll", PAYROLL).accepted and dedup.accept("permits", PERMITS).accepted
    rejected = dedup.accept("hotel-2", HOTEL_PARAPHRASE)
    assert not rejected.accepted and rejected.nearest_id == "hotel" and rejected.similarity >= 0.85
    assert not dedup.accept("library-2", LIBRARY_PARAPHRASE).accepted
    assert dedup.ids == ["library", "hotel", "payroll", "permits"] and (dedup.accepted, dedup.rejected) == (3, 2)
    # A resumed run offering an accepted topic again is not a duplicate of itself.
    assert dedup.accept("hotel", HOTEL).accepted and dedup.ids.count("hotel") == 1


def test_accept_many_dedups_within_the_batch(static):
    decisions = DedupFilter(static).accept_many([("a", HOTEL), ("b", LIBRARY), ("c", HOTEL_PARAPHRASE), ("d", HOTEL)])
    assert [d.accepted for d in decisions] == [True, True, False, False]
    assert [d.nearest_id for d in decisions[2:]] == ["a", "a"]


def test_near_duplicates_against_an_index(static):
    index = VectorIndex(static.dim)
    index.add(["hotel", "library"], static.embed([HOTEL, LIBRARY]))
    found = near_duplicates([PAYROLL, LIBRARY_PARAPHRASE, HOTEL], index, embedder=static)
    assert [(m.position, m.nearest_id) for m in found] == [(1, "library"), (2, "hotel")]
    assert found[1].similarity == pytest.approx(1.0, abs=1e-5)
    assert near_duplicates(static.embed([PAYROLL]), index) == []


# --- k-means ------------------------------------------------------------------------------------
def test_kmeans_is_deterministic_for_a_seed_and_finds_clear_groups():
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(4, 16))
    points = np.concatenate([c + 0.05 * rng.normal(size=(50, 16)) for c in centers]).astype(np.float32)
    a1, c1 = kmeans(points, 4, seed=7)
    a2, c2 = kmeans(points, 4, seed=7)
    assert np.array_equal(a1, a2) and np.array_equal(c1, c2)
    assert a1.shape == (200,) and c1.shape == (4, 16) and np.allclose(np.linalg.norm(c1, axis=1), 1.0, atol=1e-4)
    for group in range(4):
        assert len(set(a1[group * 50:(group + 1) * 50].tolist())) == 1
    assert len(set(a1.tolist())) == 4
    with pytest.raises(ValueError, match="between 1"):
        kmeans(points[:3], 4)


def test_kmeans_of_topic_texts_groups_by_domain(static):
    texts = [HOTEL, HOTEL_PARAPHRASE, LIBRARY, LIBRARY_PARAPHRASE]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assignments, _ = kmeans(static.embed(texts), 2, seed=0)
    assert assignments[0] == assignments[1] != assignments[2] == assignments[3]
