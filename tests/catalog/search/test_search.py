"""Catalog search: a faiss index over every env's text, cached beside index.sqlite."""

import json

import pytest

from catalog.models import EnvManifest
from catalog.search.embeddings import HashingEmbedder, StaticModelEmbedder
from catalog.search.index import CACHE_INDEX, CACHE_META, CatalogSearch, catalog_dedup_filter, env_text, search_catalog
from catalog.store import Catalog
from tests.catalog.conftest import REFERENCE_IDS

ENV_SOURCE = '''
from sqlmodel import Field
from catalog.envkit import Env, fail, ok, table_base, tool

Table = table_base()


class Room(Table, table=True):
    __tablename__ = "rooms"
    id: str = Field(primary_key=True)
    guest: str = ""


class HotelEnv(Env):
    tables = (Room,)

    @tool(kind="write")
    def book(self, room_id: str, guest: str) -> dict:
        """Book a room.

        Args:
            room_id: The room.
            guest: Who stays.
        """
        room = self.get(Room, room_id)
        if room is None:
            return fail(f"Room {room_id} not found")
        room.guest = guest
        return ok()
'''
HOTEL = "Hotel front desk: guests book rooms, check in and out, and are billed for their stays."
LIBRARY_COPY = ("The circulation desk of a lending library: members borrow, renew, reserve and return books; late "
                "returns and lost copies are fined.")


@pytest.fixture(scope="module")
def static():
    return StaticModelEmbedder()


def write(catalog, env_id="hotel", description=HOTEL, name="Hotel", topic="travel/hotels", guest=""):
    manifest = EnvManifest(id=env_id, name=name, kind="sql", entry="HotelEnv", topic=topic, description=description)
    state = {"rooms": {"r1": {"id": "r1", "guest": guest}}}
    return catalog.write_env(manifest, ENV_SOURCE, {"s1": state}, replace=True)


def test_env_text_joins_name_topic_and_description(reference):
    text = env_text(reference.get("library").manifest)
    assert text.startswith("Lending library. education libraries. The circulation desk")


def test_reference_envs_are_searchable_in_an_empty_catalog(tmp_path, static):
    search = CatalogSearch(Catalog(tmp_path), static)
    results = search.search("borrow books", k=10)
    assert [r["id"] for r in results][0] == "library" and sorted(r["id"] for r in results) == sorted(REFERENCE_IDS)
    assert set(results[0]) == {"id", "name", "score", "semantic", "lexical", "topic", "description", "reference"}
    assert results[0]["name"] == "Lending library" and results[0]["reference"] is True
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)
    assert search.search("transfer money between accounts", 1)[0]["id"] == "bank"
    assert search.search("book a doctor appointment", 1)[0]["id"] == "clinic"
    assert search.search("   ", 3) == [] and search.search("books", 0) == []


# Two envs of a 200-env procedural catalog (their name, topic and the start of their description).
HOTEL_GUESTS = ("Hotel front desk (guests)", "Hotel front desk: guests (blacklist, reinstate) with bookings",
                "A hotel's front desk books rooms for guests, checks them in and out, and bills their stays.")
SMART_HOME = ("Smart home hub (account holders)",
              "Smart home hub: account holders (lock, unlock) with homes, devices, device events",
              "Support agents for a smart-home platform manage account holders' homes, pair and update devices, arm "
              "security modes, and triage device events.")


def test_a_word_that_names_an_env_finds_it(tmp_path, static):
    catalog = Catalog(tmp_path)
    for env_id, (name, topic, description) in (("hotel-09f9f8", HOTEL_GUESTS), ("smart-home-743487", SMART_HOME)):
        write(catalog, env_id, description, name=name, topic=topic)
    search = CatalogSearch(catalog, static)
    # The 64-d embedding alone ranks the smart-home env first for "hotel": BM25 on the env's words fixes that.
    assert search.search("hotel", 1, lexical_weight=0.0)[0]["id"] == "smart-home-743487"
    best = search.search("hotel", 2)
    assert [hit["id"] for hit in best] == ["hotel-09f9f8", "smart-home-743487"]
    assert best[0]["lexical"] == 1.0 and best[1]["lexical"] == 0.0
    assert best[0]["score"] == round(0.6 * best[0]["semantic"] + 0.4, 4)
    assert search.search("hotel room bookings", 1)[0]["id"] == "hotel-09f9f8"
    # Queries with no word BM25 knows fall back to the embedding's order; nonsense is no error.
    for query in ("!!! ???", "ホテル 予約", "the and of", "x" * 5000):
        hits = search.search(query, 6)
        assert [h["id"] for h in hits] == [h["id"] for h in search.search(query, 6, lexical_weight=0.0)]
        assert all(h["lexical"] == 0.0 for h in hits)
    with pytest.raises(ValueError, match="between 0 and 1"):
        search.search("hotel", 1, lexical_weight=1.5)


def test_search_catalog_and_a_catalog_folder_that_does_not_exist(tmp_path, static):
    missing = tmp_path / "nowhere"
    results = search_catalog(Catalog(missing), "borrow books", 2, embedder=static)
    assert [r["id"] for r in results][:1] == ["library"] and len(results) == 2
    assert not missing.exists()  # searching creates no catalog folder


def test_user_envs_are_found_and_the_cache_is_reused(tmp_path, static):
    catalog = Catalog(tmp_path)
    write(catalog)
    first = CatalogSearch(catalog, static)
    assert first.search("reserve a hotel room for a guest", 1)[0]["id"] == "hotel"
    assert (first.stats.embedded, first.stats.cache) == (5, "rebuilt")
    assert (tmp_path / CACHE_INDEX).is_file() and (tmp_path / CACHE_META).is_file()
    meta = json.loads((tmp_path / CACHE_META).read_text())
    assert meta["embedder"] == static.name and sorted(meta["ids"]) == sorted([*REFERENCE_IDS, "hotel"])
    second = CatalogSearch(catalog, static)
    assert second.search("reserve a hotel room for a guest", 1)[0]["id"] == "hotel"
    assert (second.stats.embedded, second.stats.reused, second.stats.cache) == (0, 5, "hit")
    assert catalog.list()[1] == []  # the cache files are no env folders


def test_cache_follows_env_changes(tmp_path, static):
    catalog = Catalog(tmp_path)
    write(catalog)
    CatalogSearch(catalog, static).refresh()
    # New env: only it is embedded.
    write(catalog, "hostel", "Hostel bed reservations: backpackers reserve beds in dorms.", name="Hostel")
    stats = CatalogSearch(catalog, static).refresh()
    assert (stats.embedded, stats.reused, stats.cache) == (1, 5, "updated")
    # Code/state change (content hash) re-embeds that env only.
    write(catalog, "hostel", "Hostel bed reservations: backpackers reserve beds in dorms.", name="Hostel", guest="x")
    assert CatalogSearch(catalog, static).refresh().embedded == 1
    # A new description (env.json only, outside the content hash) is picked up too.
    write(catalog, "hotel", "Ski school: instructors teach lessons to pupils on the slopes.", name="Ski school")
    search = CatalogSearch(catalog, static)
    assert search.refresh().embedded == 1
    assert search.search("ski lessons", 1)[0]["id"] == "hotel"
    # Removal drops the env from the index.
    catalog.remove("hostel")
    search = CatalogSearch(catalog, static)
    assert "hostel" not in search.index.ids and search.stats.embedded == 0
    # A long-lived search sees new envs after refresh().
    write(catalog, "hostel", "Hostel bed reservations: backpackers reserve beds in dorms.", name="Hostel")
    assert "hostel" not in search.index.ids
    search.refresh()
    assert "hostel" in search.index.ids


@pytest.mark.parametrize("damage", [
    lambda root: (root / CACHE_INDEX).write_bytes(b"\x00garbage"),
    lambda root: (root / CACHE_INDEX).write_bytes((root / CACHE_INDEX).read_bytes()[:40]),
    lambda root: (root / CACHE_META).write_text("{not json"),
    lambda root: (root / CACHE_META).write_text(json.dumps({"version": 1, "embedder": "x"})),
    lambda root: (root / CACHE_META).unlink(),
])
def test_a_corrupt_cache_is_rebuilt(tmp_path, static, damage, caplog):
    catalog = Catalog(tmp_path)
    write(catalog)
    CatalogSearch(catalog, static).refresh()
    damage(tmp_path)
    search = CatalogSearch(catalog, static)
    assert search.search("borrow books", 1)[0]["id"] == "library"
    assert search.stats.embedded == 5 and search.stats.cache in {"corrupt", "rebuilt"}
    again = CatalogSearch(catalog, static)
    again.refresh()
    assert again.stats.cache == "hit"


def test_another_embedder_rebuilds_the_cache(tmp_path, static):
    catalog = Catalog(tmp_path)
    CatalogSearch(catalog, static).refresh()
    hashing = CatalogSearch(catalog, HashingEmbedder())
    assert hashing.refresh().embedded == 4 and hashing.index.dim == 512
    assert json.loads((tmp_path / CACHE_META).read_text())["embedder"] == HashingEmbedder().name


def test_similar_pairs(tmp_path, static):
    catalog = Catalog(tmp_path)
    search = CatalogSearch(catalog, static)
    assert search.similar_pairs(0.85) == []  # the reference envs are far apart
    write(catalog, "library-copy", LIBRARY_COPY, name="Lending library", topic="education/libraries")
    write(catalog)
    search.refresh()
    pairs = search.similar_pairs(0.85)
    assert [(a, b) for a, b, _ in pairs] == [("library", "library-copy")] and pairs[0][2] >= 0.85
    assert all(score >= 0.5 for _, _, score in search.similar_pairs(0.5))


def test_a_dedup_filter_seeded_with_the_catalogs_topics(tmp_path, static):
    catalog = Catalog(tmp_path)
    write(catalog, "library-copy", LIBRARY_COPY, name="Lending library", topic="education/libraries")
    write(catalog, topic="")  # no topic: its name stands in
    dedup = catalog_dedup_filter(catalog, embedder=static, threshold=0.85)
    topics = {s.id: s.topic or s.name for s in catalog.list()[0]}
    assert sorted(dedup.ids) == sorted([*REFERENCE_IDS, "hotel", "library-copy"]) and topics["hotel"] == "Hotel"
    expected = static.embed([topics[env_id] for env_id in dedup.ids])  # topics, not the search text
    assert [round(float(v @ w), 4) for v, w in zip(dedup.index.vectors(), expected, strict=True)] == [1.0] * 6
    decision = dedup.accept("new", "education/libraries")
    assert not decision.accepted and decision.nearest_id in {"library", "library-copy"}
    assert dedup.accept("ski", "Ski school: instructors teach lessons to pupils on the slopes.").accepted


def test_taken_topics_come_after_the_catalogs_and_replace_an_entry_of_the_same_id(tmp_path, static):
    catalog = Catalog(tmp_path)
    write(catalog)
    dedup = catalog_dedup_filter(catalog, [("hotel", "ski school lessons"), ("zoo", "zoo keepers feed animals")],
                                 embedder=static)
    assert dedup.ids == [*sorted(REFERENCE_IDS), "hotel", "zoo"] and dedup.threshold == 0.85
    assert dedup.check("ski school lessons")[0] == "hotel"
    assert catalog_dedup_filter(Catalog(tmp_path / "absent", include_reference=False), embedder=static).ids == []
