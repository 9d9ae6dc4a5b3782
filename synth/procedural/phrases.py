"""Faker providers for the columns Faker has none for: reasons, notes, subjects, tags, teams, supplies...

Faker gives people, companies, places, dates and numbers; it has no provider for why a booking
was cancelled, what a support ticket is about or what a stock room holds, and its `sentence()`
is word salad ("Director several high."). Each list here is one `DynamicProvider` (Faker's own
mechanism, so the seeded instance picks from it deterministically), named by what the column
holds; synth/procedural/values.py chooses the provider from the column's name and table.
Phrases are domain-neutral: they read right in a hotel, a clinic or a depot.
"""

from __future__ import annotations

import re

from faker import Faker
from faker.providers import DynamicProvider

__all__ = ["PHRASES", "add_phrases", "reason_provider"]

PHRASES: dict[str, tuple[str, ...]] = {
    "cancel_reason": (
        "Customer asked to cancel", "Duplicate booking", "Plans changed", "Booked by mistake",
        "Found a better date", "Payment did not go through", "Illness", "Travel disrupted",
        "Requested by the account holder", "No longer needed"),
    "reject_reason": (
        "Missing required documents", "Failed the eligibility check", "Incomplete application",
        "Details could not be verified", "Outside the policy limits", "Submitted after the deadline",
        "Signature missing", "Does not meet the requirements"),
    "hold_reason": (
        "Suspected fraud under review", "Overdue balance", "Repeated no-shows", "Complaint under investigation",
        "Awaiting identity verification", "Requested by the account holder", "Policy breach reported",
        "Safety concern raised"),
    "refund_reason": (
        "Charged twice", "Service not delivered", "Item returned unused", "Damaged on arrival",
        "Goodwill gesture", "Price adjustment", "Cancelled within the free period", "Billing error"),
    "failure_reason": (
        "Did not arrive", "Contact details out of date", "Expired before use", "Not collected in time",
        "Address not found", "Recipient unavailable", "Ran past the time limit", "Lost in transit"),
    "close_reason": (
        "Completed and signed off", "Superseded by a newer record", "No activity for twelve months",
        "Closed at the customer's request", "Merged with another record", "Resolved", "End of term",
        "Retired from service"),
    "ticket_subject": (
        "Charged twice for one order", "Cannot log in to my account", "Change of address", "Refund not received",
        "Question about my invoice", "Appointment needs rescheduling", "Item arrived damaged",
        "Update my payment card", "Request for a receipt", "Wrong item delivered"),
    "notice_subject": (
        "Your booking is confirmed", "Reminder: appointment tomorrow", "Your invoice is ready", "Payment received",
        "Action needed: update your details", "Your order has shipped", "Your request was approved",
        "Service update for your account"),
    "notice_body": (
        "Thank you, we have received your payment.", "Please reply to confirm the new time.",
        "Your documents are ready to collect at the front desk.", "We could not reach you by phone; please call us back.",
        "Your request has been approved and will take effect today.", "A reminder that your balance is due next week."),
    "note_summary": (
        "Follow-up call scheduled", "Customer satisfied with the outcome", "Awaiting documents from the client",
        "Escalated to the supervisor", "Resolved at first contact", "Second visit needed", "Quote sent by email",
        "Spoke with the account holder"),
    "note_body": (
        "Called the customer and confirmed the details.", "Left a voicemail; will try again tomorrow.",
        "Checked on site, no further action needed.", "Customer will send the signed form by Friday.",
        "Discussed the options; customer chose the standard plan.", "Passed to the billing team for review."),
    "review_headline": (
        "Great service", "Would come back", "Friendly and quick", "Not what I expected", "Excellent value",
        "Could be better", "Highly recommended", "Long wait but worth it"),
    "review_body": (
        "Staff were helpful and everything was ready on time.", "Booking was easy and the price was fair.",
        "Had to wait longer than promised, but the result was good.", "Clean, well organised and friendly.",
        "The second visit was smoother than the first.", "Communication could have been clearer."),
    "tag_name": (
        "VIP", "Priority", "Follow-up", "Repeat customer", "Corporate", "Seasonal", "Wholesale", "Fragile",
        "Do not contact", "Pending review", "Referral", "Student"),
    "tag_description": (
        "Gets priority handling", "Needs a call back this week", "Account billed monthly",
        "Handle with extra care", "Flagged for the next review", "Came through a referral"),
    "team_name": (
        "Front Office", "Customer Care", "Billing", "Operations", "Night Shift", "Field Services", "Dispatch",
        "Quality Assurance", "Accounts Receivable", "Scheduling"),
    "role_name": (
        "Front desk agent", "Team lead", "Supervisor", "Administrator", "Billing clerk", "Scheduler",
        "Support agent", "Operations manager", "Auditor", "Trainee"),
    "role_description": (
        "Handles day-to-day requests", "Approves refunds and exceptions", "Full access to settings and users",
        "Read-only access for audits", "Manages the schedule and rota", "Looks after billing and payments"),
    "storage_name": (
        "Main stock room", "Back office cupboard", "Loading bay cage", "Basement store", "Cold room",
        "Secure cabinet", "Mezzanine shelving", "Yard container"),
    "supply_item": (
        "Printer paper A4, 500 sheets", "Nitrile gloves, box of 100", "Cleaning spray 750 ml", "AA batteries, pack of 24",
        "Bin liners 60 L", "Coffee beans 1 kg", "Label printer rolls", "Disinfectant wipes", "Hand towels, case of 12",
        "Safety vests, high-visibility", "Packing tape 48 mm", "Receipt paper rolls"),
    "service_line": (
        "Standard service fee", "Call-out charge", "Labour, per hour", "Materials", "Late payment fee",
        "Delivery charge", "Setup and configuration", "Annual maintenance"),
    "ledger_memo": (
        "Monthly settlement", "Refund of overpayment", "Deposit transfer", "Balance adjustment",
        "Correction of a duplicate charge", "Fee rebate", "Prepayment top-up", "Credit note applied"),
    "document_title": (
        "Signed agreement", "Proof of address", "Photo ID", "Inspection report", "Invoice copy",
        "Insurance certificate", "Site photos", "Authorisation form"),
    "event_title": (
        "Weekly team meeting", "Quarterly review", "Client walkthrough", "Training session", "Site visit",
        "Planning call", "Handover meeting", "Open day"),
    "access_instructions": (
        "Ring the bell at the side gate", "Key box code given by phone", "Call on arrival; dog on premises",
        "Use the rear entrance", "Reception will escort you", "Park in the visitor bay"),
    "allergies": ("None known", "Peanuts", "Shellfish", "Penicillin", "Lactose", "Gluten", "Tree nuts", "Latex"),
    "caption": (
        "View from the north side", "Before the repair", "After the repair", "Detail of the damage",
        "Front entrance at dusk", "Team at the opening"),
    "comment": (
        "Please resubmit with the signed form", "Approved pending payment", "Needs a second review",
        "Dimensions missing on page 2", "Resolved on the call", "Waiting on the supplier"),
    "complaint": (
        "Charged twice for the same visit", "Staff arrived late", "Item arrived damaged", "Waited over an hour",
        "Wrong item delivered", "No reply to my emails"),
    "dedication": ("For my parents, with love", "To the memory of a dear friend", "For everyone who believed",
                   "To my students", "For my family"),
    "issue_summary": (
        "Intermittent connection drops", "Unit does not power on", "Leak under the sink", "Error code on start-up",
        "Noise when running", "Display flickers"),
    "narrative": (
        "Reported by phone; confirmed on site.", "Observed during the evening round; area secured.",
        "Customer described the problem in detail; photos attached.", "Found at the routine check; logged for repair."),
    "special_request": (
        "Quiet room if possible", "Arriving after 10 pm", "Ground floor please", "High chair needed",
        "Celebrating an anniversary", "Vegetarian meal", "Wheelchair access", "Early start preferred"),
    "description": (
        "Most requested option", "Includes setup and a follow-up check", "Limited availability in peak season",
        "Replaces the previous version", "Suitable for groups of up to six", "Available on weekdays only"),
    "summary": (
        "Follow-up scheduled", "Progress on track", "Awaiting client documents", "Escalated for review",
        "Completed as planned", "Needs another session"),
}

# moves whose record keeps a reason, by what the field is named after (cancelled_reason, refunded_reason...)
_REASON_KINDS = (
    ("cancel_reason", re.compile(r"cancel|withdr|abandon|no_show")),
    ("reject_reason", re.compile(r"reject|declin|denied|deny|dismiss")),
    ("refund_reason", re.compile(r"refund|return|void|written_off")),
    ("hold_reason", re.compile(r"suspend|block|hold|frozen|freez|quarantin|paused|disabled|flagged|blacklist|"
                               r"revok|escalat")),
    ("failure_reason", re.compile(r"fail|lapsed|expire|lost|missed")),
)


def reason_provider(field_name: str) -> str:
    """The provider of a reason column: `cancelled_reason` takes cancellation reasons, a bare `reason` the closing ones."""
    for provider, pattern in _REASON_KINDS:
        if pattern.search(field_name):
            return provider
    return "close_reason"


def add_phrases(fake: Faker) -> Faker:
    """`fake` with one provider per list in PHRASES (`fake.cancel_reason()`, `fake.tag_name()`...)."""
    for name, elements in PHRASES.items():  # bound to `fake`, so its seed decides (unbound, the global RNG would)
        fake.add_provider(DynamicProvider(provider_name=name, elements=list(elements), generator=fake))
    return fake
