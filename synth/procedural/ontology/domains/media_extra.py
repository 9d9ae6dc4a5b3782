"""More media domains (stock photo licensing, trade book publishing)."""

from synth.procedural.ontology.schema import Domain

_GENRES = "literary|mystery|romance|sci_fi|nonfiction|children"

DOMAINS = [
    Domain(
        id="photo_licensing", sector="media", title="Stock photo licensing",
        description="Licensing agents at a stock photo agency review contributors' uploads, sell usage licenses "
                    "to client accounts, and issue contributors' royalty statements.",
        actor="licensing agent",
        entities=[
            dict(name="contributor", prefix="CT", fields=[
                "full_name:name label", "email:email unique", "royalty_rate:float 0.15..0.6", "exclusive:bool",
                "country:choice US|UK|DE|BR|IN|JP", "royalty_balance:money 0..20000 balance",
                "payout_threshold:money 25..500"],
                states=["applicant", "approved", "suspended", "terminated"],
                transitions={"approve": "applicant>approved", "suspend": "approved>suspended",
                             "reinstate": "suspended>approved",
                             "terminate": "applicant,approved,suspended>terminated"}),
            dict(name="photo", prefix="PH", parent="contributor", fields=[
                "title:text label", "asset_code:code unique", "orientation:choice landscape|portrait|square|panoramic",
                "megapixels:float 8..100", "model_release:bool",
                "category:choice travel|business|food|nature|people|architecture", "editorial_only:bool"],
                states=["submitted", "in_review", "published", "rejected", "removed"],
                transitions={"start_review": "submitted>in_review", "publish": "in_review>published",
                             "reject": "in_review>rejected", "take_down": "published>removed"},
                words=["Foggy pine forest at dawn", "Team meeting in glass office", "Street food stall in Bangkok",
                       "Aerial view of salt flats", "Barista pouring latte art", "Lighthouse in a storm",
                       "Grandparents hiking a ridge"]),
            dict(name="licensee", prefix="LC", fields=[
                "company_name:text label", "billing_email:email unique",
                "plan:choice pay_per_image|monthly_10|monthly_50|enterprise", "download_credits:int 0..750 balance",
                "tax_region:choice US|EU|UK|APAC", "renews_on:datetime"],
                states=["active", "past_due", "cancelled"],
                transitions={"mark_past_due": "active>past_due", "settle_account": "past_due>active",
                             "cancel": "active,past_due>cancelled"},
                words=["Northwind Creative", "Bluefin Media Group", "Atlas Travel Magazine", "Greenleaf Foods",
                       "Parallax Ads", "Civic Daily News"]),
            dict(name="license", prefix="LI", parent="photo", refs=["licensee"], fields=[
                "license_number:code label unique",
                "license_kind:choice standard|extended|editorial|exclusive_buyout", "price:money 1..5000",
                "print_run_limit:int 0..500000", "territory:choice worldwide|north_america|europe|single_country",
                "expires_on:datetime deadline"],
                states=["active", "revoked", "expired"],
                transitions={"revoke": "active>revoked", "expire": "active>expired"}),
            dict(name="statement", prefix="ST", parent="contributor", fields=[
                "statement_number:code label unique", "period_month:int 1..12", "gross_sales:money 0..50000",
                "royalty_total:money 0..20000", "withholding_tax:money 0..5000", "issued_on:datetime"],
                states=["draft", "issued", "paid", "disputed"],
                transitions={"issue": "draft>issued", "mark_paid": "issued>paid", "dispute": "issued>disputed",
                             "resolve_dispute": "disputed>issued"}),
        ],
    ),
    Domain(
        id="book_publishing", sector="media", title="Trade book publishing",
        description="Managing editors at a trade publisher contract manuscripts from authors, move them through "
                    "editing and production, and order print runs.",
        actor="managing editor",
        entities=[
            dict(name="author", prefix="AU", fields=[
                "full_name:name label", "email:email unique", "literary_agent:name",
                "advance_unearned:money 0..250000 balance", f"preferred_genre:choice {_GENRES}", "debut:bool"]),
            dict(name="imprint", prefix="IM", fields=[
                "imprint_name:text label", "publisher_code:code unique", "lead_editor:name",
                "annual_slots:int 4..60 capacity", f"focus:choice {_GENRES}", "launched_on:datetime"],
                words=["Lantern House", "Blue Heron Books", "Redline Press", "Tidewater Young Readers",
                       "Foundry Nonfiction"]),
            dict(name="manuscript", prefix="MS", parent="imprint", refs=["author"], fields=[
                "working_title:text label", "isbn:code unique", "word_count:int 20000..200000",
                f"genre:choice {_GENRES}", "delivery_due:datetime", "advance:money 0..500000",
                "first_format:choice hardcover|trade_paperback|mass_market|ebook_only"],
                states=["under_contract", "in_edit", "copyedit", "typeset", "published", "cancelled"],
                transitions={"accept_delivery": "under_contract>in_edit", "send_to_copyedit": "in_edit>copyedit",
                             "send_to_typesetting": "copyedit>typeset", "publish": "typeset>published",
                             "cancel_contract": "under_contract,in_edit>cancelled"},
                words=["The Salt Archive", "Midnight at Kestrel Bay", "Orbitals", "The Quiet Inheritance",
                       "Feeding Cities", "Wren and the Lantern Fox"]),
            dict(name="print_run", prefix="PR", parent="manuscript", fields=[
                "run_number:code label unique", "copies:int 500..100000",
                "printer:choice lsc|bookmasters|versa|asia_pacific_offset",
                "paper:choice cream_50lb|white_60lb|coated_70lb", "unit_cost:money 1..12",
                "ship_date:datetime"],
                states=["quoted", "ordered", "printing", "delivered", "cancelled"],
                transitions={"place_order": "quoted>ordered", "start_press": "ordered>printing",
                             "receive": "printing>delivered", "cancel": "quoted,ordered>cancelled"}),
            dict(name="editorial_query", plural="editorial_queries", prefix="EQ", parent="manuscript", fields=[
                "query_code:code label unique", "page:int 1..800",
                "category:choice fact_check|style|permissions|legal_review|continuity", "raised_by:name",
                "respond_by:datetime deadline"],
                states=["open", "answered", "resolved", "waived"],
                transitions={"answer": "open>answered", "resolve": "answered>resolved", "reopen": "answered>open",
                             "waive": "open>waived"}),
        ],
    ),
]
