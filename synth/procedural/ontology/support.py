"""Support entities every domain's systems have besides their own: audit logs, payments, staff, addresses...

A domain lists what is particular to it (bookings, shipments, claims); the tables around them --
who works there and in which role, where customers live, what was paid and how, what changed
and when, what was sent to whom -- recur everywhere, so they are written once here and attached
by the designer to any domain (issue 12: medium and large envs reach 4-25 tables with them).
Each template names its `host`: `none` (stands alone), `person` (belongs to the domain entity a
person is: the one with an email, else one labelled by a name) or `focus` (belongs to the env's
focus entity). `needs` lists templates it refers to; `system` marks tables only the env's own
tools write (audit log, status history, ledger, payments): agents read them, never edit them.
The compiler knows the four system tables by name and writes their rows from compound tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from synth.procedural.ontology.schema import EntityT

__all__ = ["SupportT", "SUPPORT", "SYSTEM_TABLES", "support_entity"]

SYSTEM_TABLES = ("audit_log", "status_change", "ledger_entry", "payment")


@dataclass(frozen=True)
class SupportT:
    """One support entity template: its EntityT fields (parent bound on attach), host, dependencies."""

    name: str
    spec: dict[str, Any]
    host: Literal["none", "person", "focus"] = "none"
    needs: tuple[str, ...] = ()
    system: bool = False
    refs: tuple[str, ...] = field(default=())


SUPPORT: tuple[SupportT, ...] = (
    SupportT("audit_log", dict(prefix="AL", fields=[
        "action:code label core", "record_id:code core", "detail:text core", "logged_at:datetime core"]), system=True),
    SupportT("status_change", dict(prefix="SC", fields=[
        "record_id:code label core", "record_kind:code core", "from_status:code core", "to_status:code core",
        "reason:text core", "changed_at:datetime core"]), system=True),
    SupportT("ledger_entry", dict(prefix="LE", plural="ledger_entries", fields=[
        "memo:text label core", "from_account:code core", "to_account:code core", "transfer_amount:money 0..100000 core",
        "fee:money 0..100 core", "posted_at:datetime core"]), system=True),
    SupportT("payment", dict(prefix="PM", fields=[
        "reference:code label core", "paid_amount:money 0..100000 core", "method:choice card|bank_transfer|balance core",
        "paid_at:datetime core"], states=["captured", "refunded"], transitions={"refund": "captured>refunded"}),
        system=True),
    SupportT("staff_role", dict(prefix="RL", fields=[
        "role_name:text label unique", "access_level:choice viewer|agent|supervisor|admin core",
        "description:text", "max_members:int 1..50 capacity"])),
    SupportT("staff_member", dict(prefix="ST", fields=[
        "full_name:name label", "work_email:email unique", "phone:phone", "employee_code:code unique",
        "hired_on:datetime", "desk_extension:code"],
        states=["active", "on_leave", "disabled"],
        transitions={"start_leave": "active>on_leave", "return_from_leave": "on_leave>active",
                     "disable": "active,on_leave>disabled"}), needs=("staff_role",), refs=("staff_role",)),
    SupportT("address", dict(prefix="AD", plural="addresses", fields=[
        "line1:text label", "city:text core", "postcode:code core", "country:choice US|UK|DE|FR|ES|IT|NL|CA core",
        "is_default:bool"]), host="person"),
    SupportT("notification", dict(prefix="NT", fields=[
        "subject:text label", "channel:choice email|sms|push core", "body:text", "queued_at:datetime"],
        states=["queued", "sent", "failed", "cancelled"],
        transitions={"send": "queued>sent", "mark_failed": "queued>failed", "cancel": "queued>cancelled"}),
        host="person"),
    SupportT("support_ticket", dict(prefix="TK", fields=[
        "subject:text label", "ticket_number:code unique", "priority:choice low|normal|high|urgent core",
        "channel:choice email|phone|chat", "opened_at:datetime"],
        states=["open", "pending", "resolved", "closed"],
        transitions={"mark_pending": "open>pending", "resolve": "open,pending>resolved", "close": "resolved>closed",
                     "reopen": "resolved>open"}), host="person"),
    SupportT("shift", dict(prefix="SF", fields=[
        "shift_code:code label unique", "starts_at:datetime core", "ends_at:datetime core",
        "location:choice front|back_office|remote|field", "break_minutes:int 0..60"],
        states=["planned", "worked", "cancelled"], transitions={"mark_worked": "planned>worked",
                                                               "cancel": "planned>cancelled"}),
        needs=("staff_member",), refs=("staff_member",)),
    SupportT("document", dict(prefix="DC", fields=[
        "title:text label", "file_name:code unique", "doc_type:choice contract|invoice|photo|report|id_proof core",
        "size_kb:int 1..20000", "uploaded_at:datetime"],
        states=["pending_review", "accepted", "rejected"],
        transitions={"accept": "pending_review>accepted", "reject": "pending_review>rejected"}), host="focus"),
    SupportT("case_note", dict(prefix="CN", fields=[
        "summary:text label", "body:text core", "visibility:choice internal|shared", "written_at:datetime"]),
        host="focus"),
    SupportT("tag", dict(prefix="TG", fields=[
        "tag_name:text label unique", "color:choice red|green|blue|amber|grey", "description:text"])),
    SupportT("promo_code", dict(prefix="PR", fields=[
        "code:code label unique", "percent_off:int 5..50 core", "min_spend:money 0..200",
        "uses_left:int 0..500 balance", "valid_until:datetime deadline"],
        states=["active", "paused", "expired"],
        transitions={"pause": "active>paused", "resume": "paused>active", "expire": "active,paused>expired"})),
    SupportT("invoice", dict(prefix="IV", fields=[
        "invoice_number:code label unique", "invoice_total:money 0..100000 core", "issued_on:datetime",
        "due_on:datetime deadline", "currency:choice USD|EUR|GBP"],
        states=["draft", "issued", "paid", "void"],
        transitions={"issue": "draft>issued", "mark_paid": "issued>paid", "void": "draft,issued>void"}),
        host="person"),
    SupportT("invoice_line", dict(prefix="IL", fields=[
        "description:text label", "quantity:int 1..50 core", "unit_price:money 1..500 core"]),
        needs=("invoice",), refs=("invoice",)),
    SupportT("storage_location", dict(prefix="SL", fields=[
        "location_name:text label", "location_code:code unique", "capacity_units:int 50..5000",
        "zone:choice ambient|chilled|secure|outdoor"])),
    SupportT("stock_item", dict(prefix="SI", fields=[
        "item_name:text label", "item_sku:code unique", "on_hand:int 0..1000 balance", "reorder_level:int 0..100",
        "unit_cost:money 0.5..500"]), needs=("storage_location",), refs=("storage_location",)),
    SupportT("vendor", dict(prefix="VN", fields=[
        "company_name:text label", "contact_email:email unique", "phone:phone", "rating:float 1..5",
        "payment_terms:choice net15|net30|net60"],
        states=["approved", "on_hold", "blocked"],
        transitions={"hold": "approved>on_hold", "release": "on_hold>approved", "block": "approved,on_hold>blocked"})),
    SupportT("purchase_order", dict(prefix="PO", fields=[
        "po_number:code label unique", "po_total:money 0..100000 core", "ordered_at:datetime",
        "expected_on:datetime"],
        states=["draft", "submitted", "received", "cancelled"],
        transitions={"submit": "draft>submitted", "receive": "submitted>received",
                     "cancel": "draft,submitted>cancelled"}), needs=("vendor",), refs=("vendor",)),
    SupportT("purchase_order_line", dict(prefix="PL", fields=[
        "line_description:text label", "quantity:int 1..500 core", "unit_price:money 0.5..500 core"]),
        needs=("purchase_order", "stock_item"), refs=("purchase_order", "stock_item")),
    SupportT("team", dict(prefix="TM", fields=[
        "team_name:text label unique", "focus_area:choice operations|sales|support|finance", "headcount_limit:int 2..40",
        "cost_center:code"])),
    SupportT("calendar_event", dict(prefix="EV", fields=[
        "title:text label", "starts_at:datetime core", "ends_at:datetime core", "room:choice a|b|c|online",
        "attendee_limit:int 1..40"],
        states=["scheduled", "held", "cancelled"], transitions={"mark_held": "scheduled>held",
                                                                "cancel": "scheduled>cancelled"}), host="focus"),
    SupportT("customer_review", dict(prefix="RV", fields=[
        "headline:text label", "stars:int 1..5 core", "body:text", "posted_at:datetime"],
        states=["pending", "published", "hidden"],
        transitions={"publish": "pending>published", "hide": "pending,published>hidden"}), host="person"),
    SupportT("loyalty_account", dict(prefix="LA", fields=[
        "member_number:code label unique", "points:int 0..100000 balance", "tier:choice bronze|silver|gold",
        "joined_on:datetime"],
        states=["active", "frozen"], transitions={"freeze": "active>frozen", "unfreeze": "frozen>active"}),
        host="person"),
)


def support_entity(template: SupportT, host: str | None) -> EntityT:
    """The template as an entity of a domain: `host` becomes its parent (for person/focus templates)."""
    spec = dict(template.spec)
    parent = host if template.host != "none" else (template.refs[0] if template.refs else None)
    refs = tuple(r for r in template.refs if r != parent)
    return EntityT(name=template.name, parent=parent, refs=refs, **spec)
