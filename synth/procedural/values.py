"""Realistic field values from Faker, chosen by a field's kind and name (seeded: same seed, same values).

Faker (pinned to one major version in pyproject.toml) gives names, email domains, addresses,
phone numbers, company names and file names; synth/procedural/phrases.py adds providers for what
Faker has none for (reasons by kind of move, ticket subjects, notes, tags, teams, supplies). This
module only decides which of them a column gets -- by its name, and for the support tables by
table and column -- and keeps the values of one record consistent with each other: an email is
made from the name of the person the record names (or at the domain of the company it names),
dates sit where their meaning puts them relative to the env clock (a birth date decades back, a
booking time in the past, a due date around now), and amounts fall in the field's range with
cents. Columns that point at other records (an audit entry's record and action, a status
change's move) are filled once every table exists (synth/procedural/support_rows.py).
"""

from __future__ import annotations

import datetime as dt
import random
import re
import unicodedata
from typing import Any

from faker import Faker

from synth.procedural.blueprint import EntitySpec, FieldSpec
from synth.procedural.phrases import PHRASES, add_phrases, reason_provider

__all__ = ["ValueMaker", "Person", "datetime_sense"]

# Datetime fields by what their name says they mean (first match wins).
_BIRTH = re.compile(r"birth|dob\b")
_PAST = re.compile(r"(^|_)(since|joined|opened|acquired|commissioned|hired|created|registered|issued|received|"
                   r"filed|booked|applied|placed|signed|recorded|logged|reported|detected|collected|purchased|"
                   r"last|started|assigned|submitted|enrolled|paid|billed|counted|calibrated|inspected|bred|"
                   r"appraised|executed|activated|attempted|taken|made|published|shipped|delivered|completed|closed|approved|"
                   r"treated|administered|installed|measured|tested|performed|visited|graduated|incurred|"
                   r"occurred|sent|posted|verified|scanned|checked)(_|$)")
_COMPANY = re.compile(r"company|business|firm|employer|merchant|carrier|agency|distributor|vendor|supplier|"
                      r"lienholder|institution|insurer|brand|manufacturer|legal_name|broker|courier|consignee|"
                      r"notify_party|client_name|debtor_name|bank_name|payer_name|sponsor")
_PLACE = re.compile(r"(^|_)(address|street|location|site|directions|access_instructions)(_|$)")
_CITY = re.compile(r"(^|_)(city|town|county|municipality)(_|$)")
_PROSE = re.compile(r"description|comment|narrative|note|summary|complaint|caption|reason|details|remarks|"
                    r"instructions|dedication|allergies|symptoms|findings|request|preference|message|feedback")
_TITLE = re.compile(r"title|headline|campaign|event|course|episode|invention|obligation")
_POSTCODE = re.compile(r"zip|postcode|postal")
# support-table columns by (template, column): what Faker or phrases.py provider fills them
_SUPPORT_COLUMNS = {
    ("support_ticket", "subject"): "ticket_subject", ("notification", "subject"): "notice_subject",
    ("notification", "body"): "notice_body", ("case_note", "summary"): "note_summary", ("case_note", "body"): "note_body",
    ("customer_review", "headline"): "review_headline", ("customer_review", "body"): "review_body",
    ("tag", "tag_name"): "tag_name", ("tag", "description"): "tag_description", ("team", "team_name"): "team_name",
    ("staff_role", "role_name"): "role_name", ("staff_role", "description"): "role_description",
    ("storage_location", "location_name"): "storage_name", ("stock_item", "item_name"): "supply_item",
    ("purchase_order_line", "line_description"): "supply_item", ("invoice_line", "description"): "service_line",
    ("ledger_entry", "memo"): "ledger_memo", ("document", "title"): "document_title",
    ("calendar_event", "title"): "event_title", ("address", "line1"): "street_address",
}
_SAME_AS = {"tutor_summary": "summary", "item_description": "description"}
# code columns that have a format of their own (first match wins; the rest get `<prefix>-####-XX`)
_CODES: tuple[tuple[re.Pattern[str], Any], ...] = (
    (re.compile(r"extension"), lambda fake: fake.numerify("x####")),
    (re.compile(r"firmware|software_version|(^|_)version"), lambda fake: fake.numerify("%.#.#")),
    (re.compile(r"slug"), lambda fake: fake.slug()),
    (re.compile(r"hostname"), lambda fake: fake.hostname()),
    (re.compile(r"initials"), lambda fake: fake.lexify("??").upper()),
    (re.compile(r"(^|_)seat($|_)"), lambda fake: fake.bothify("#?").upper()),
    (re.compile(r"(^|_)(puk|pin)($|_)"), lambda fake: fake.numerify("########")),
    (re.compile(r"(^|_)p?tin($|_)|(^|_)ein($|_)"), lambda fake: fake.ein()),
    (re.compile(r"(^|_)mcc($|_)"), lambda fake: fake.numerify("5###")),
    (re.compile(r"microchip"), lambda fake: fake.numerify("9850#########")),
    (re.compile(r"period"), lambda fake: fake.date(pattern="%Y-%m")),
    (re.compile(r"citation"), lambda fake: fake.numerify("Rule ##(b)(#)")),
)

def datetime_sense(field: FieldSpec) -> str:
    """'birth', 'past' (already happened: never after the clock), 'window' (a deadline) or 'around'."""
    if "deadline" in field.roles:
        return "window"
    if _BIRTH.search(field.name):
        return "birth"
    if "now" in field.roles or _PAST.search(field.name):  # a creation event (the designer's "now") has happened
        return "past"
    return "around"


class Person:
    """One person a record names: the name fields show it, email fields are built from it."""

    def __init__(self, fake: Faker, name: str | None = None) -> None:
        """A new person, or the one `name` says ("Ines Moreau": an entity's listed label value)."""
        first, _, last = (name or "").strip().partition(" ")
        self.first, self.last = (first, last.split()[-1] if last.split() else first) if name else (
            fake.first_name(), fake.last_name())
        self.domain = fake.free_email_domain()

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    def email(self, number: int, domain: str | None = None) -> str:
        """first.last@domain; the number keeps two namesakes' addresses apart."""
        local = re.sub(r"[^a-z]", "", _ascii(self.first).lower()) + "." + re.sub(r"[^a-z]", "", _ascii(self.last).lower())
        return f"{local}{number if number > 1 else ''}@{domain or self.domain}"


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


class ValueMaker:
    """Values for one state: a seeded Faker and a seeded RNG, and the env clock dates are relative to."""

    def __init__(self, seed: str, clock: dt.datetime) -> None:
        self.rng = random.Random(seed)
        self.fake = add_phrases(Faker("en_US"))
        self.fake.seed_instance(seed)
        self.clock = clock

    def record(self, e: EntitySpec, i: int, label: str | None = None) -> dict[str, Any]:
        """The plain values of one record (foreign keys, statuses, stamps and versions are the caller's).

        `label` is the record's label when the caller takes it from the entity's listed words: a
        person's name there is the person the record's emails are made from.
        """
        people: dict[str, Person] = {}
        for f in e.fields:
            if f.kind == "name":
                named = label if f.name == e.label and label is not None else None
                people.setdefault(_person_key(f.name), Person(self.fake, named))
        first = next(iter(people), None)
        out: dict[str, Any] = {}
        for f in e.fields:
            if f.kind in ("fk", "status", "stamp", "version"):
                continue
            key = _person_key(f.name)
            if f.kind == "email" and key not in people and first is not None:
                key = first  # the one person the record names owns its email
            out[f.name] = self.value(f, e, i, people, key)
        company = next((out[f.name] for f in e.fields if f.kind == "text" and _COMPANY.search(f.name)), None)
        if company is not None and not people:  # a company's contact: a person at the company's own domain
            for f in e.fields:
                if f.kind == "email":
                    out[f.name] = Person(self.fake).email(i + 1, _company_domain(str(company)))
        return out

    def value(self, f: FieldSpec, e: EntitySpec, i: int, people: dict[str, Person] | None = None,
              person_key: str | None = None) -> Any:
        """A value for field `f` of record number `i` of `e`."""
        rng, fake = self.rng, self.fake
        kind = f.kind
        if kind in ("int", "version"):
            lo, hi = int(f.lo if f.lo is not None else 1), int(f.hi if f.hi is not None else 10)
            return rng.randint(lo, max(lo, hi))
        if kind in ("float", "money"):
            return self.amount(f)
        if kind == "bool":
            return rng.random() < 0.5
        if kind == "choice":
            return rng.choice(f.choices)
        if kind in ("name", "email"):
            people = people if people is not None else {}
            person = people.setdefault(_person_key(f.name) if person_key is None else person_key, Person(fake))
            if kind == "name":
                return person.name
            domain = fake.domain_name() if re.search(r"billing|payables|dispatch|escalation|work", f.name) else None
            return person.email(i + 1, domain)
        if kind == "phone":
            return fake.numerify("+1 (%##) %##-####")
        if kind == "code":
            return self.code(f, e, i)
        if kind == "datetime":
            return self.moment(f).isoformat()
        return self.text(f, e)

    def amount(self, f: FieldSpec) -> float:
        """In the field's range, with cents for money (two decimals for other floats)."""
        lo = f.lo if f.lo is not None else 0.0
        hi = f.hi if f.hi is not None else (500.0 if f.kind == "money" else 100.0)
        if f.kind == "money" and hi > 50 and self.rng.random() < 0.5:  # prices cluster at round figures
            whole = self.rng.randint(int(max(lo, 1)), int(hi - 1)) if hi - 1 >= max(lo, 1) else int(lo)
            return round(min(hi, max(lo, whole + self.rng.choice((0.0, 0.49, 0.5, 0.95, 0.99)))), 2)
        return round(self.rng.uniform(lo, hi), 2)

    def code(self, f: FieldSpec, e: EntitySpec, i: int) -> str:
        fake = self.fake
        if _POSTCODE.search(f.name):
            return str(fake.postcode())
        if "mask" in f.name:
            return f"****{fake.numerify('####')}"
        if "plate" in f.name:
            return str(fake.license_plate())
        if f.name == "file_name":
            return str(fake.file_name(category="office"))
        if f.name == "cost_center":
            return f"CC-{fake.numerify('####')}"
        for pattern, make in _CODES:
            if pattern.search(f.name):
                return make(fake)
        if re.search(r"card", f.name):
            return str(fake.credit_card_number())
        return f"{e.prefix}-{fake.bothify('####')}-{fake.bothify('??').upper()}"

    def moment(self, f: FieldSpec) -> dt.datetime:
        """A time whose distance from the clock fits what the field means (see `datetime_sense`)."""
        rng = self.rng
        sense = datetime_sense(f)
        if sense == "birth":
            return (self.clock - dt.timedelta(days=rng.randint(18 * 365, 80 * 365))).replace(hour=0)
        if sense == "past":
            return self.clock - dt.timedelta(days=rng.randint(1, 400), hours=rng.randint(0, 8))
        if sense == "window":
            return self.clock + dt.timedelta(days=rng.randint(-40, 40), hours=rng.randint(0, 8))
        return self.clock + dt.timedelta(days=rng.randint(-30, 90), hours=rng.randint(0, 8))

    def text(self, f: FieldSpec, e: EntitySpec) -> str:
        """Text by what the field's name says it holds; product-like labels otherwise."""
        fake, name = self.fake, f.name
        provider = self.provider(f, e)
        if provider is not None:
            return str(getattr(fake, provider)())
        if _COMPANY.search(name):
            return str(fake.company())
        if _CITY.search(name):
            return str(fake.city())
        if _PLACE.search(name):
            return f"{fake.street_address()}, {fake.city()}, {fake.state_abbr()} {fake.postcode()}"
        if _PROSE.search(name):
            return str(fake.sentence(nb_words=self.rng.randint(5, 10)))
        if _TITLE.search(name):
            return str(fake.catch_phrase()).title()
        if "job" in name or "role" in name or "position" in name:
            return str(fake.job())
        if "vessel_name" in name:
            return f"MV {fake.last_name()}"
        if "school_name" in name:
            return f"{fake.last_name()} {self.rng.choice(('Elementary School', 'Middle School', 'High School'))}"
        noun = name.removesuffix("_name").removesuffix("_label").replace("_", " ")
        return f"{fake.word().capitalize()} {fake.word()} {noun}".strip()


    @staticmethod
    def provider(f: FieldSpec, e: EntitySpec) -> str | None:
        """The Faker or phrases.py provider of a text column, if one fits it better than its kind's default."""
        if "reason" in f.roles or f.name == "reason" or f.name.endswith("_reason"):
            return reason_provider(f.name)
        if e.support and (e.name, f.name) in _SUPPORT_COLUMNS:
            return _SUPPORT_COLUMNS[(e.name, f.name)]
        name = _SAME_AS.get(f.name, f.name)
        if name not in PHRASES:  # a niche renames `tutor_summary` to `music_tutor_summary`: the kind is its last word
            name = next((kind for kind in ("summary", "description") if f.name.endswith("_" + kind)), name)
        return name if name in PHRASES and not name.endswith("_reason") else None


def _company_domain(company: str) -> str:
    """`schneider-reilly.com` for "Schneider-Reilly", `curtis.com` for "Curtis Ltd"."""
    words = [w for w in re.findall(r"[a-z0-9]+", _ascii(company).lower()) if w not in ("ltd", "inc", "llc", "plc", "and",
                                                                                          "group", "sons", "co")]
    return "-".join(words[:2] or ["company"]) + ".com"


def _person_key(name: str) -> str:
    """Which person a name or email field is about: `manager_email` goes with `manager_name`.

    >>> _person_key("manager_email"), _person_key("manager_name"), _person_key("email"), _person_key("full_name")
    ('manager', 'manager', '', '')
    """
    key = re.sub(r"_?(email|name)$", "", name)
    return "" if key in ("full", "contact") else key
