"""Nonprofit domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="donations", sector="nonprofit", title="Donor management",
        description="Development officers at a charity record donors' gifts and pledges against fundraising "
                    "campaigns, issue tax receipts, and manage monthly giving plans.",
        actor="development officer",
        entities=[
            dict(name="donor", prefix="DN", fields=[
                "full_name:name label", "email:email unique", "phone:phone",
                "donor_type:choice individual|foundation|corporate|estate", "lifetime_giving:money 0..1000000",
                "anonymous:bool"],
                states=["prospect", "active", "lapsed"],
                transitions={"record_first_gift": "prospect>active", "mark_lapsed": "active>lapsed",
                             "reactivate": "lapsed>active"}),
            dict(name="campaign", prefix="CP", fields=[
                "campaign_name:text label", "goal:money 1000..2000000", "matching_funds_left:money 0..250000 balance",
                "starts_on:datetime", "ends_on:datetime deadline",
                "channel:choice email|event|direct_mail|peer_to_peer|online"],
                states=["planning", "active", "suspended"],
                transitions={"launch": "planning>active", "suspend": "active>suspended",
                             "resume": "suspended>active"},
                words=["Spring Food Drive", "Giving Tuesday", "Annual Gala", "Clean Water Fund",
                       "Scholarship Appeal", "Year-End Appeal"]),
            dict(name="donation", prefix="DO", parent="campaign", refs=["donor"], fields=[
                "receipt_number:code label unique", "gift_amount:money 1..100000",
                "method:choice card|check|ach|stock|paypal", "received_on:datetime", "tax_deductible:bool",
                "dedication:text"],
                states=["pledged", "received", "receipted", "refunded", "cancelled"],
                transitions={"receive": "pledged>received", "issue_receipt": "received>receipted",
                             "refund": "received,receipted>refunded", "cancel_pledge": "pledged>cancelled"}),
            dict(name="recurring_gift", prefix="RG", parent="donor", refs=["campaign"], fields=[
                "plan_code:code label unique", "monthly_amount:money 5..2000", "charge_day:int 1..28",
                "card_expires:datetime", "payments_made:int 0..120"],
                states=["active", "paused", "failed", "cancelled"],
                transitions={"pause": "active>paused", "resume": "paused,failed>active", "mark_failed": "active>failed",
                             "cancel": "active,paused,failed>cancelled"}),
        ],
    ),
    Domain(
        id="volunteer_scheduling", sector="nonprofit", title="Volunteer scheduling",
        description="Volunteer coordinators at a food bank publish program shifts, sign volunteers up to fill "
                    "them, and check volunteers in and credit their hours.",
        actor="volunteer coordinator",
        entities=[
            dict(name="program", prefix="PG", fields=[
                "program_name:text label", "site_address:text", "coordinator:name", "min_age:int 12..21",
                "background_check_required:bool", "weekly_hours_goal:int 10..500"],
                states=["active", "paused", "ended"],
                transitions={"pause": "active>paused", "resume": "paused>active", "end": "active,paused>ended"},
                words=["Saturday Food Pantry", "Meals on Wheels", "After-school Tutoring", "Warehouse Sorting",
                       "Community Garden", "Senior Phone Buddies"]),
            dict(name="volunteer_shift", prefix="SH", parent="program", fields=[
                "shift_code:code label unique", "starts_at:datetime deadline", "duration_hours:float 1..8",
                "volunteer_slots:int 1..40 capacity", "role:choice sorting|driver|greeter|tutor|kitchen|data_entry",
                "indoor:bool"],
                states=["open", "roster_locked", "cancelled"],
                transitions={"lock_roster": "open>roster_locked", "unlock_roster": "roster_locked>open",
                             "cancel": "open,roster_locked>cancelled"}),
            dict(name="volunteer", prefix="VL", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "hours_logged:float 0..5000",
                "background_check_expires:datetime", "skill:choice general|driving|teaching|medical|spanish"],
                states=["applicant", "active", "inactive", "barred"],
                transitions={"approve": "applicant>active", "deactivate": "active>inactive",
                             "reactivate": "inactive>active", "bar": "applicant,active,inactive>barred"}),
            dict(name="shift_signup", prefix="SU", parent="volunteer_shift", refs=["volunteer"], fields=[
                "signup_code:code label unique", "signed_up_at:datetime", "hours_credited:float 0..8",
                "group_size:int 1..10", "transport_needed:bool"],
                states=["registered", "checked_in", "completed", "no_show", "cancelled"],
                transitions={"check_in": "registered>checked_in", "complete": "checked_in>completed",
                             "mark_no_show": "registered>no_show", "cancel": "registered>cancelled"}),
        ],
    ),
]
