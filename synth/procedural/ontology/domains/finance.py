"""Finance domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="credit_cards", sector="finance", title="Credit card servicing",
        description="Card-servicing agents at an issuer manage cardholders' accounts and plastics, and handle "
                    "authorizations, postings and disputed charges.",
        actor="card services agent",
        entities=[
            dict(name="cardholder", prefix="CH", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "credit_score:int 300..850",
                "annual_income:money 10000..400000", "reward_points:int 0..200000 balance"],
                states=["active", "frozen", "closed"],
                transitions={"freeze": "active>frozen", "unfreeze": "frozen>active",
                             "close": "active,frozen>closed"}),
            dict(name="card_account", prefix="CA", parent="cardholder", fields=[
                "account_number:code label unique", "credit_limit:money 500..50000",
                "available_credit:money 0..50000 balance", "apr:float 0.09..0.32",
                "product:choice classic|gold|platinum|secured", "statement_day:int 1..28",
                "max_cards:int 1..5 capacity"],
                states=["open", "delinquent", "charged_off", "closed"],
                transitions={"flag_delinquent": "open>delinquent", "cure": "delinquent>open",
                             "charge_off": "delinquent>charged_off", "close": "open>closed"}),
            dict(name="card", prefix="CD", parent="card_account", fields=[
                "pan_token:code label unique", "embossed_name:name", "expires_at:datetime deadline",
                "contactless:bool", "daily_atm_limit:money 0..1500"],
                states=["issued", "active", "blocked", "cancelled"],
                transitions={"activate": "issued>active", "block": "active>blocked", "unblock": "blocked>active",
                             "cancel": "issued,active,blocked>cancelled"}),
            dict(name="merchant", prefix="M", fields=[
                "merchant_name:text label", "mcc:code", "country:choice US|CA|GB|FR|DE|JP",
                "risk_level:choice low|medium|high", "online_only:bool"],
                words=["Blue Bottle Coffee", "Shell Station 114", "Harbor Freight Tools", "Delta Air Lines",
                       "Whole Foods Market", "Netflix", "Uber Trip"]),
            dict(name="card_transaction", prefix="TX", parent="card", refs=["merchant"], fields=[
                "auth_code:code label unique", "txn_amount:money 0.5..5000", "currency:choice USD|EUR|GBP|CAD",
                "channel:choice chip|contactless|online|atm", "posted_at:datetime", "foreign:bool"],
                states=["authorized", "posted", "disputed", "reversed"],
                transitions={"post": "authorized>posted", "dispute": "posted>disputed",
                             "reject_dispute": "disputed>posted", "reverse": "authorized,disputed>reversed"}),
        ],
    ),
    Domain(
        id="loan_servicing", sector="finance", title="Loan servicing",
        description="Loan servicers track borrowers' installment loans, post payments against scheduled "
                    "installments, and move loans through delinquency, forbearance and payoff.",
        actor="loan servicer",
        entities=[
            dict(name="borrower", prefix="B", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "credit_score:int 300..850",
                "employer:text", "monthly_income:money 1000..40000"]),
            dict(name="loan", prefix="LN", parent="borrower", fields=[
                "loan_number:code label unique", "principal:money 1000..750000",
                "outstanding_balance:money 0..750000 balance", "interest_rate:float 0.02..0.18",
                "term_months:int 12..360", "product:choice mortgage|auto|personal|student",
                "maturity_date:datetime"],
                states=["originated", "active", "delinquent", "in_forbearance", "paid_off", "charged_off"],
                transitions={"disburse": "originated>active", "mark_delinquent": "active>delinquent",
                             "cure": "delinquent>active", "grant_forbearance": "active,delinquent>in_forbearance",
                             "end_forbearance": "in_forbearance>active", "pay_off": "active>paid_off",
                             "charge_off": "delinquent>charged_off"}),
            dict(name="installment", prefix="IN", parent="loan", fields=[
                "installment_code:code label unique", "due_date:datetime", "amount_due:money 50..8000",
                "principal_part:money 0..8000", "interest_part:money 0..4000", "late_fee:money 0..150"],
                states=["scheduled", "late", "paid", "waived"],
                transitions={"pay": "scheduled,late>paid", "mark_late": "scheduled>late", "waive": "late>waived"}),
            dict(name="loan_payment", prefix="PM", parent="loan", fields=[
                "confirmation:code label unique", "payment_amount:money 1..20000", "method:choice ach|check|wire|card",
                "received_at:datetime", "autopay:bool"],
                states=["received", "cleared", "bounced"],
                transitions={"clear": "received>cleared", "bounce": "received>bounced"}),
            dict(name="collateral", prefix="CO", parent="loan", fields=[
                "description:text label", "appraised_value:money 1000..1500000",
                "collateral_type:choice real_estate|vehicle|equipment|securities", "lien_position:int 1..3",
                "insured:bool", "appraised_on:datetime"],
                words=["14 Birch Lane single-family home", "2021 Ford F-150 pickup", "Haas VF-2 CNC mill",
                       "Brokerage account ending 4471", "2018 Honda Civic sedan", "Lakeview condo unit 5B"]),
            dict(name="payoff_quote", prefix="PQ", parent="loan", fields=[
                "quote_number:code label unique", "payoff_amount:money 0..750000", "per_diem_interest:money 0..250",
                "good_through:datetime deadline", "requested_by:choice borrower|title_company|refinancing_lender",
                "delivery:choice email|fax|mail"],
                states=["issued", "accepted", "withdrawn"],
                transitions={"accept": "issued>accepted", "withdraw": "issued>withdrawn"}),
        ],
    ),
    Domain(
        id="expense_reports", sector="finance", title="Expense reports",
        description="Finance reviewers check employees' travel expense reports line by line against category "
                    "limits, then approve and reimburse them.",
        actor="expense reviewer",
        entities=[
            dict(name="employee", prefix="E", fields=[
                "full_name:name label", "email:email unique",
                "department:choice sales|engineering|finance|marketing|operations", "cost_center:code",
                "corporate_card:bool", "per_diem_limit:money 30..150"]),
            dict(name="expense_category", plural="expense_categories", prefix="CAT", fields=[
                "category_name:text label", "gl_account:code unique", "max_per_item:money 20..2000",
                "receipt_required_over:money 0..100", "taxable_benefit:bool"],
                words=["Airfare", "Lodging", "Meals", "Ground transport", "Client entertainment",
                       "Conference fees"]),
            dict(name="expense_report", prefix="ER", parent="employee", fields=[
                "title:text label", "report_number:code unique",
                "trip_purpose:choice client_visit|conference|training|internal_meeting",
                "total_claimed:money 0..15000", "submit_by:datetime",
                "advance_remaining:money 0..3000 balance", "line_limit:int 10..60 capacity"],
                states=["draft", "submitted", "approved", "rejected", "reimbursed"],
                transitions={"submit": "draft>submitted", "approve": "submitted>approved",
                             "reject": "submitted>rejected", "reopen": "rejected>draft",
                             "reimburse": "approved>reimbursed"},
                words=["Q3 Chicago client summit", "Berlin sales offsite", "Onboarding trip to Austin HQ",
                       "Customer workshop in Lyon", "PMI training in Denver", "Trade show Las Vegas"]),
            dict(name="expense_line", prefix="EL", parent="expense_report", refs=["expense_category"], fields=[
                "line_code:code label unique", "claimed_amount:money 1..5000", "currency:choice USD|EUR|GBP|JPY",
                "incurred_on:datetime", "has_receipt:bool", "merchant_name:text"],
                states=["pending_review", "accepted", "flagged", "disallowed"],
                transitions={"accept": "pending_review,flagged>accepted", "flag": "pending_review>flagged",
                             "disallow": "pending_review,flagged>disallowed"}),
            dict(name="reimbursement", prefix="RB", parent="employee", refs=["expense_report"], fields=[
                "payment_ref:code label unique", "reimbursed_amount:money 0..15000",
                "method:choice payroll|direct_deposit|check", "scheduled_for:datetime",
                "currency:choice USD|EUR|GBP"],
                states=["scheduled", "paid", "failed"],
                transitions={"pay": "scheduled>paid", "fail": "scheduled>failed", "retry": "failed>scheduled"}),
        ],
    ),
]
