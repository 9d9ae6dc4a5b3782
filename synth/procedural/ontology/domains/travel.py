"""Travel domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="hotel", sector="travel", title="Hotel front desk",
        description="A hotel's front desk books rooms for guests, checks them in and out, and bills their stays.",
        actor="front-desk clerk",
        entities=[
            dict(name="guest", prefix="G", fields=[
                "full_name:name label", "email:email unique", "loyalty_points:int 0..20000 balance",
                "vip:bool", "phone:phone", "nationality:choice FR|DE|US|JP|BR|IN"],
                states=["active", "blacklisted"], transitions={"blacklist": "active>blacklisted",
                                                               "reinstate": "blacklisted>active"},
                words=["Ines Moreau", "Kenji Sato", "Amara Obi", "Lukas Brandt", "Sofia Reyes", "Tom Hale"]),
            dict(name="room", prefix="R", fields=[
                "room_number:code label unique", "floor:int 1..12", "beds:int 1..4 capacity",
                "nightly_rate:money 60..450", "view:choice city|garden|sea", "smoking:bool"],
                states=["available", "cleaning", "out_of_service"],
                transitions={"send_to_cleaning": "available>cleaning", "mark_clean": "cleaning>available",
                             "take_out_of_service": "available,cleaning>out_of_service",
                             "return_to_service": "out_of_service>available"}),
            dict(name="booking", prefix="BK", parent="room", refs=["guest"], fields=[
                "reference:code label unique", "nights:int 1..21", "guests_count:int 1..4",
                "total_price:money 0..9000", "deposit:money 0..2000 balance", "arrival_at:datetime deadline",
                "channel:choice direct|agency|phone", "special_request:text"],
                states=["pending", "confirmed", "checked_in", "checked_out", "cancelled"],
                transitions={"confirm": "pending>confirmed", "check_in": "confirmed>checked_in",
                             "check_out": "checked_in>checked_out", "cancel": "pending,confirmed>cancelled"}),
            dict(name="invoice", prefix="INV", parent="booking", fields=[
                "number:code label unique", "amount_due:money 0..9000 balance", "tax_rate:float 0..0.25",
                "issued_on:datetime", "paid_by:choice card|cash|transfer"],
                states=["open", "paid", "void"], transitions={"pay": "open>paid", "void": "open>void"}),
        ],
    ),
]
