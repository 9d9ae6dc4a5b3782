"""More finance domains (brokerage orders, invoice factoring, crowdfunding)."""

from synth.procedural.ontology.schema import Domain

_COUNTRIES = "US|UK|CA|AU|DE|NL"

DOMAINS = [
    Domain(
        id="brokerage_orders", sector="finance", title="Brokerage order desk",
        description="Registered representatives at a retail brokerage place, amend and cancel clients' equity "
                    "orders and record their fills against each account's buying power.",
        actor="registered representative",
        entities=[
            dict(name="client", prefix="CL", fields=[
                "full_name:name label", "email:email unique", "risk_profile:choice conservative|moderate|aggressive",
                "options_level:int 0..4", "accredited_investor:bool", "country:choice US|CA|GB|SG|DE"],
                states=["pending_kyc", "approved", "restricted", "closed"],
                transitions={"approve": "pending_kyc>approved", "restrict": "approved>restricted",
                             "lift_restriction": "restricted>approved", "close": "approved,restricted>closed"}),
            dict(name="brokerage_account", prefix="AC", parent="client", fields=[
                "account_number:code label unique", "account_type:choice cash|margin|ira|roth_ira",
                "buying_power:money 0..500000 balance", "margin_multiplier:float 1..4",
                "day_trades_left:int 0..3", "base_currency:choice USD|CAD|GBP"],
                states=["open", "frozen", "closed"],
                transitions={"freeze": "open>frozen", "unfreeze": "frozen>open", "close": "open,frozen>closed"}),
            dict(name="instrument", prefix="IN", fields=[
                "symbol:code label unique", "company_name:text", "exchange:choice NYSE|NASDAQ|LSE|TSX|ARCA",
                "last_price:money 0.5..4000", "lot_size:int 1..100", "shortable:bool"],
                states=["trading", "halted", "delisted"],
                transitions={"halt": "trading>halted", "resume_trading": "halted>trading",
                             "delist": "trading,halted>delisted"},
                words=["AAPL", "MSFT", "NVDA", "JPM", "XOM", "KO", "TSLA", "VTI"]),
            dict(name="trade_order", prefix="TO", parent="brokerage_account", refs=["instrument"], fields=[
                "order_ref:code label unique", "side:choice buy|sell|sell_short",
                "order_type:choice market|limit|stop|stop_limit", "quantity:int 1..10000",
                "limit_price:money 0..4000", "time_in_force:choice day|gtc|ioc|fok", "expires_at:datetime deadline"],
                states=["staged", "working", "partially_filled", "filled", "cancelled", "rejected"],
                transitions={"route": "staged>working", "record_partial_fill": "working>partially_filled",
                             "complete_fill": "working,partially_filled>filled",
                             "cancel": "staged,working,partially_filled>cancelled", "reject": "staged>rejected"}),
            dict(name="execution", prefix="EX", parent="trade_order", fields=[
                "exec_code:code label unique", "fill_quantity:int 1..10000", "fill_price:money 0.5..4000",
                "venue:choice NYSE|NASDAQ|IEX|dark_pool", "commission:money 0..25", "executed_on:datetime"],
                states=["reported", "settled", "busted"],
                transitions={"settle": "reported>settled", "bust": "reported>busted"}),
        ],
    ),
    Domain(
        id="invoice_factoring", sector="finance", title="Invoice factoring desk",
        description="Factoring analysts buy small suppliers' invoices at a discount, advance cash against them "
                    "and chase the customers who owe them for payment.",
        actor="factoring analyst",
        entities=[
            dict(name="supplier", prefix="SU", fields=[
                "company_name:text label", "tax_number:code unique", "available_facility:money 0..2000000 balance",
                "industry:choice staffing|trucking|manufacturing|wholesale|construction",
                "advance_rate:float 0.7..0.95", "with_recourse:bool", "onboarded_on:datetime"],
                states=["underwriting", "active", "suspended", "terminated"],
                transitions={"approve_facility": "underwriting>active", "suspend": "active>suspended",
                             "reinstate": "suspended>active",
                             "terminate": "underwriting,active,suspended>terminated"},
                words=["Pine Ridge Trucking LLC", "Apex Staffing Group", "Bluewater Fabrication",
                       "Crescent Produce Wholesale", "Ironline Builders", "Northgate Textiles"]),
            dict(name="debtor", prefix="DB", fields=[
                "debtor_name:text label", "duns_number:code unique", "credit_limit:money 5000..1000000",
                "average_days_to_pay:int 15..120", "credit_grade:choice A|B|C|D", "payables_email:email"],
                states=["approved", "watchlist", "declined"],
                transitions={"add_to_watchlist": "approved>watchlist", "clear": "watchlist>approved",
                             "decline": "approved,watchlist>declined"}),
            dict(name="schedule", prefix="SA", parent="supplier", fields=[
                "schedule_number:code label unique", "submitted_on:datetime", "invoice_limit:int 1..50 capacity",
                "discount_fee_rate:float 0.01..0.05", "same_day_wire:bool", "funding_cutoff:datetime deadline"],
                states=["submitted", "under_review", "funded", "rejected"],
                transitions={"start_review": "submitted>under_review", "fund": "under_review>funded",
                             "reject": "submitted,under_review>rejected"}),
            dict(name="factored_invoice", prefix="FI", parent="schedule", refs=["debtor"], fields=[
                "invoice_number:code label unique", "face_value:money 500..250000", "advance_paid:money 0..230000",
                "outstanding:money 0..250000 balance", "due_date:datetime", "po_reference:code",
                "payment_terms:choice net_30|net_45|net_60|net_90"],
                states=["pending_verification", "verified", "advanced", "collected", "charged_back"],
                transitions={"verify": "pending_verification>verified", "advance_funds": "verified>advanced",
                             "mark_collected": "advanced>collected",
                             "charge_back": "pending_verification,verified,advanced>charged_back"}),
            dict(name="collection_call", prefix="CC", parent="factored_invoice", fields=[
                "call_ref:code label unique", "contact_name:name",
                "outcome:choice promise_to_pay|dispute_raised|no_answer|paid_confirmed",
                "promised_payment:money 0..250000", "follow_up_on:datetime", "channel:choice phone|email|letter"]),
        ],
    ),
    Domain(
        id="crowdfunding_campaigns", sector="finance", title="Crowdfunding campaign moderation",
        description="Trust-and-safety staff at a crowdfunding platform review creators' campaigns, manage reward "
                    "tiers and backers' pledges, and collect or refund pledges when a campaign ends.",
        actor="trust and safety reviewer",
        entities=[
            dict(name="creator", prefix="CR", fields=[
                "full_name:name label", "email:email unique", f"country:choice {_COUNTRIES}",
                "payout_method:choice bank|paypal|stripe", "past_campaigns:int 0..30", "two_factor_enabled:bool"],
                states=["unverified", "verified", "banned"],
                transitions={"verify_identity": "unverified>verified", "ban": "unverified,verified>banned"}),
            dict(name="campaign", prefix="CP", parent="creator", fields=[
                "campaign_title:text label", "slug:code unique", "funding_goal:money 1000..500000",
                "escrow_balance:money 0..900000 balance",
                "category:choice technology|games|film|music|design|publishing", "ends_at:datetime",
                "all_or_nothing:bool"],
                states=["draft", "in_review", "live", "successful", "failed", "cancelled"],
                transitions={"submit_for_review": "draft>in_review", "approve_launch": "in_review>live",
                             "send_back": "in_review>draft", "close_funded": "live>successful",
                             "close_unfunded": "live>failed", "cancel": "draft,in_review,live>cancelled"},
                words=["Solar Camp Lantern", "Tabletop RPG: Ashen Crowns", "Saltwater: An Indie Documentary",
                       "Modular Desk Organizer", "Night Trains Vinyl Reissue", "Kids' Coding Robot"]),
            dict(name="reward_tier", prefix="RT", parent="campaign", fields=[
                "tier_name:text label", "pledge_minimum:money 1..10000", "backer_limit:int 5..1000 capacity",
                "estimated_delivery:datetime", "ships_internationally:bool", "includes_physical:bool"],
                states=["available", "sold_out", "retired"],
                transitions={"mark_sold_out": "available>sold_out", "reopen": "sold_out>available",
                             "retire": "available,sold_out>retired"}),
            dict(name="backer", prefix="BA", fields=[
                "full_name:name label", "email:email unique", f"country:choice {_COUNTRIES}", "card_on_file:bool",
                "wallet_credit:money 0..500 balance"]),
            dict(name="pledge", prefix="PG", parent="reward_tier", refs=["backer"], fields=[
                "pledge_code:code label unique", "pledge_value:money 1..10000", "add_on_total:money 0..500",
                "shipping_region:choice domestic|europe|asia|rest_of_world", "pledged_on:datetime",
                "anonymous:bool"],
                states=["authorized", "collected", "refunded", "dropped"],
                transitions={"collect": "authorized>collected", "refund": "collected>refunded",
                             "drop": "authorized>dropped"}),
        ],
    ),
]
