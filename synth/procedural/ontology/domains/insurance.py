"""Insurance domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="insurance_claims", sector="insurance", title="Personal lines claims",
        description="Claims handlers at a personal-lines insurer take first notice of loss on auto and home "
                    "policies, assign adjusters, set reserves, and issue claim payments.",
        actor="claims handler",
        entities=[
            dict(name="policyholder", prefix="PH", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "customer_since:datetime",
                "preferred_language:choice en|es|zh|vi", "fraud_watch:bool"],
                words=["Marisol Vega", "Derek Lindqvist", "Aiko Tanaka", "Samuel Okoro", "Hannah Kowalski",
                       "Ravi Menon"]),
            dict(name="policy", prefix="PL", plural="policies", parent="policyholder", fields=[
                "policy_number:code label unique", "line:choice auto|homeowners|renters|umbrella|pet",
                "annual_premium:money 100..12000", "deductible:money 0..5000",
                "coverage_limit:money 10000..2000000", "effective_until:datetime deadline"],
                states=["active", "lapsed", "cancelled"],
                transitions={"lapse": "active>lapsed", "reinstate": "lapsed>active",
                             "cancel": "active,lapsed>cancelled"}),
            dict(name="adjuster", prefix="AD", fields=[
                "full_name:name label", "license_number:code unique",
                "specialty:choice auto|property|liability|catastrophe", "region:choice northeast|south|midwest|west",
                "open_claim_limit:int 10..150"],
                states=["active", "on_leave"],
                transitions={"start_leave": "active>on_leave", "return_from_leave": "on_leave>active"}),
            dict(name="claim", prefix="CL", parent="policy", refs=["adjuster"], fields=[
                "claim_number:code label unique", "loss_date:datetime",
                "loss_type:choice collision|theft|water_damage|fire|hail|liability",
                "reserve_amount:money 0..500000 balance", "reported_at:datetime",
                "proof_of_loss_due:datetime", "total_loss:bool"],
                states=["reported", "investigating", "approved", "denied", "paid", "closed"],
                transitions={"investigate": "reported>investigating", "approve": "investigating>approved",
                             "deny": "investigating>denied", "mark_paid": "approved>paid",
                             "close": "paid,denied>closed", "reopen": "closed>investigating"}),
            dict(name="claim_payment", prefix="CP", parent="claim", fields=[
                "payment_number:code label unique", "payee:name", "payment_amount:money 0..500000",
                "method:choice check|ach|direct_to_repair_shop",
                "payment_type:choice indemnity|expense|rental_reimbursement", "issued_on:datetime"],
                states=["pending_approval", "issued", "voided"],
                transitions={"issue": "pending_approval>issued", "void": "pending_approval,issued>voided"}),
        ],
    ),
    Domain(
        id="policy_underwriting", sector="insurance", title="Commercial underwriting",
        description="Commercial underwriters review broker submissions for small businesses, order risk "
                    "inspections, issue quotes and bind coverage.",
        actor="commercial underwriter",
        entities=[
            dict(name="broker", prefix="BR", fields=[
                "agency_name:text label", "producer_code:code unique", "contact_email:email",
                "commission_pct:float 5..20", "home_state:choice CA|TX|NY|FL|IL|OH", "eo_insured:bool",
                "binding_authority_left:money 0..2000000 balance"],
                states=["appointed", "terminated"],
                transitions={"terminate_appointment": "appointed>terminated", "reappoint": "terminated>appointed"},
                words=["Harbor Risk Partners", "Summit Insurance Group", "Blue Ridge Agency", "Lone Star Commercial",
                       "Great Lakes Brokerage", "Pacific Coverage Advisors"]),
            dict(name="insured_business", plural="insured_businesses", prefix="IB", fields=[
                "business_name:text label", "industry:choice restaurant|contractor|retail|tech|manufacturing|trucking",
                "annual_revenue:money 50000..50000000", "employees:int 1..2000", "years_in_business:int 0..100",
                "prior_claims:int 0..20"],
                words=["Rosa's Taqueria", "Ironclad Roofing", "Bluebird Boutique", "Quanta Data Labs",
                       "Midwest Plastics Molding", "Red Rock Freight"]),
            dict(name="submission", prefix="SB", parent="broker", refs=["insured_business"], fields=[
                "submission_number:code label unique",
                "coverage:choice general_liability|property|workers_comp|cyber|commercial_auto",
                "requested_limit:money 100000..10000000", "effective_date:datetime",
                "quote_needed_by:datetime deadline", "target_premium:money 500..500000"],
                states=["received", "in_review", "referred", "quoted", "declined"],
                transitions={"start_review": "received>in_review", "refer": "in_review>referred",
                             "quote": "in_review,referred>quoted", "decline": "in_review,referred>declined"}),
            dict(name="quote", prefix="QT", parent="submission", fields=[
                "quote_number:code label unique", "premium:money 500..500000", "deductible:money 0..100000",
                "per_occurrence_limit:money 100000..10000000", "valid_until:datetime deadline",
                "taxes_and_fees:money 0..20000"],
                states=["draft", "issued", "bound", "withdrawn"],
                transitions={"issue": "draft>issued", "bind": "issued>bound",
                             "withdraw": "draft,issued>withdrawn"}),
            dict(name="risk_inspection", prefix="RI", parent="submission", fields=[
                "report_code:code label unique", "inspector:name", "inspected_on:datetime", "risk_score:int 0..100",
                "recommendations:int 0..30", "hazard_level:choice low|moderate|severe"],
                states=["ordered", "completed", "waived"],
                transitions={"complete": "ordered>completed", "waive": "ordered>waived"}),
        ],
    ),
]
