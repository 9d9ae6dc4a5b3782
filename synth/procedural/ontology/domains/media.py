"""Media domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="streaming_subscriptions", sector="media", title="Streaming subscriptions",
        description="Subscriber-care agents at a video streaming service change subscribers' plans, manage "
                    "viewing profiles, and settle failed or disputed billing charges.",
        actor="subscriber care agent",
        entities=[
            dict(name="subscriber", prefix="SB", fields=[
                "full_name:name label", "email:email unique", "country:choice US|CA|GB|DE|BR|JP",
                "signup_channel:choice web|ios|android|tv|partner", "gift_credit:money 0..200 balance",
                "parental_controls:bool"]),
            dict(name="plan", prefix="PL", fields=[
                "plan_name:text label", "monthly_price:money 3.99..24.99", "max_streams:int 1..4",
                "resolution:choice sd|hd|uhd", "ads:bool", "downloads:bool"],
                states=["offered", "grandfathered", "retired"],
                transitions={"grandfather": "offered>grandfathered", "retire": "offered,grandfathered>retired"},
                words=["Basic with Ads", "Standard", "Premium 4K", "Family", "Student", "Mobile Only"]),
            dict(name="subscription", prefix="SUB", parent="subscriber", refs=["plan"], fields=[
                "subscription_code:code label unique", "billing_cycle:choice monthly|annual",
                "paid_through:datetime", "profile_slots:int 1..5 capacity", "started_on:datetime",
                "auto_renew:bool", "promo_code:code"],
                states=["trialing", "active", "past_due", "paused", "cancelled"],
                transitions={"convert": "trialing>active", "flag_past_due": "active>past_due",
                             "recover": "past_due>active", "pause": "active>paused", "resume": "paused>active",
                             "cancel": "trialing,active,past_due,paused>cancelled"}),
            dict(name="viewing_profile", prefix="PF", parent="subscription", fields=[
                "profile_name:text label", "maturity_rating:choice kids|teen|adult",
                "language:choice en|es|fr|de|pt|ja", "autoplay:bool", "pin_protected:bool"],
                words=["Mom", "Dad", "Kids", "Grandma", "Living Room TV", "Alex"]),
            dict(name="billing_charge", prefix="CH", parent="subscriber", refs=["subscription"], fields=[
                "invoice_number:code label unique", "charge_amount:money 0..300", "tax:money 0..30", "billed_at:datetime",
                "payment_method:choice card|paypal|gift_card|carrier_billing", "attempt:int 1..4"],
                states=["pending", "paid", "failed", "refunded"],
                transitions={"settle": "pending>paid", "decline": "pending>failed", "retry": "failed>pending",
                             "refund": "paid>refunded"}),
        ],
    ),
    Domain(
        id="newsroom_cms", sector="media", title="Newsroom content management",
        description="Desk editors in a newsroom assign stories to reporters, move copy through editing to "
                    "publication, clear photo rights, and append corrections.",
        actor="desk editor",
        entities=[
            dict(name="news_section", prefix="SC", fields=[
                "section_name:text label", "slug:code unique", "section_editor:name",
                "story_budget:int 5..40 capacity", "paywalled:bool"],
                words=["Politics", "Business", "Climate", "Sports", "Culture", "Local News"]),
            dict(name="reporter", prefix="RP", fields=[
                "full_name:name label", "email:email unique",
                "beat:choice politics|business|science|sports|arts|metro", "staff_type:choice staff|freelance|wire",
                "freelance_budget:money 0..5000 balance"],
                states=["active", "on_leave", "departed"],
                transitions={"start_leave": "active>on_leave", "return_from_leave": "on_leave>active",
                             "offboard": "active,on_leave>departed"}),
            dict(name="story", plural="stories", prefix="ST", parent="news_section", refs=["reporter"], fields=[
                "headline:text label", "slug:code unique", "word_count:int 100..6000", "embargo_until:datetime",
                "file_by:datetime", "breaking:bool",
                "story_type:choice news|feature|opinion|analysis|live_blog"],
                states=["pitched", "drafting", "in_edit", "published", "spiked", "retracted"],
                transitions={"commission": "pitched>drafting", "file_copy": "drafting>in_edit",
                             "send_back": "in_edit>drafting", "publish": "in_edit>published",
                             "spike": "pitched,drafting,in_edit>spiked", "retract": "published>retracted"},
                words=["City council approves transit levy", "Heat wave strains power grid",
                       "Local startup raises $40M", "Storm closes coastal highway",
                       "School board delays start times", "Harbor cleanup finds record debris"]),
            dict(name="media_asset", prefix="MA", parent="story", fields=[
                "caption:text label", "asset_code:code unique", "asset_type:choice photo|video|graphic|audio",
                "credit:name", "rights:choice staff|licensed|handout|creative_commons",
                "license_expires:datetime deadline"],
                states=["uploaded", "approved", "rejected"],
                transitions={"approve": "uploaded>approved", "reject": "uploaded>rejected"}),
            dict(name="correction", prefix="CR", parent="story", fields=[
                "correction_code:code label unique", "severity:choice minor|factual|legal", "summary:text",
                "requested_by:choice reader|subject|staff|legal", "logged_at:datetime"],
                states=["requested", "appended", "declined"],
                transitions={"append": "requested>appended", "decline": "requested>declined"}),
        ],
    ),
    Domain(
        id="podcast_hosting", sector="media", title="Podcast hosting and ads",
        description="Account managers at a podcast hosting network publish shows' episodes, book guests, and "
                    "sell advertisers ad campaigns against show inventory.",
        actor="podcast network account manager",
        entities=[
            dict(name="show", prefix="SH", fields=[
                "show_title:text label", "feed_slug:code unique",
                "category:choice tech|comedy|true_crime|business|health|news", "explicit:bool",
                "episode_limit:int 10..500 capacity", "language:choice en|es|fr|de"],
                states=["active", "paused", "archived"],
                transitions={"pause": "active>paused", "resume": "paused>active",
                             "archive": "active,paused>archived"},
                words=["The Debug Hour", "Midnight Case Files", "Founders Unfiltered", "Plant-Based Kitchen",
                       "Weekly Market Wrap", "Laugh Track"]),
            dict(name="episode", prefix="EP", parent="show", fields=[
                "episode_title:text label", "episode_code:code unique", "duration_min:int 5..240",
                "season:int 1..20", "episode_type:choice full|trailer|bonus", "publish_at:datetime",
                "explicit:bool"],
                states=["draft", "scheduled", "published", "unpublished"],
                transitions={"schedule": "draft>scheduled", "publish": "draft,scheduled>published",
                             "unpublish": "published>unpublished", "republish": "unpublished>published"}),
            dict(name="guest_appearance", prefix="GU", parent="episode", fields=[
                "guest_name:name label", "email:email", "release_signed:bool", "appearance_fee:money 0..2000",
                "topic:text"],
                states=["invited", "confirmed", "recorded", "declined"],
                transitions={"confirm": "invited>confirmed", "mark_recorded": "confirmed>recorded",
                             "decline": "invited,confirmed>declined"}),
            dict(name="advertiser", prefix="AD", fields=[
                "brand_name:text label", "contact_email:email unique",
                "industry:choice dtc|finance|software|food|fitness", "prepaid_budget:money 0..50000 balance",
                "cpm_floor:money 10..60"],
                words=["Northpeak Coffee", "Loomly Mattress", "ByteVault VPN", "Greenbox Meals",
                       "Stride Running Co", "Ledgerly Accounting"]),
            dict(name="ad_campaign", prefix="AC", parent="advertiser", refs=["show"], fields=[
                "campaign_code:code label unique", "impressions_booked:int 1000..2000000", "cpm:money 10..60",
                "placement:choice pre_roll|mid_roll|post_roll", "starts_on:datetime", "ends_on:datetime deadline"],
                states=["proposed", "booked", "running", "paused", "cancelled"],
                transitions={"book": "proposed>booked", "launch": "booked>running", "pause": "running>paused",
                             "resume": "paused>running", "cancel": "proposed,booked,paused>cancelled"}),
        ],
    ),
]
