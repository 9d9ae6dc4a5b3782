"""Sports domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="gym_membership", sector="sports", title="Fitness club front desk",
        description="Front-desk staff at a fitness club sell membership agreements, book members into "
                    "instructor-led classes, and handle freezes and cancellations.",
        actor="fitness club front-desk staff",
        entities=[
            dict(name="member", prefix="MB", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "key_fob:code unique",
                "guest_passes:int 0..12 balance", "emergency_contact:name"]),
            dict(name="membership_plan", prefix="PL", fields=[
                "plan_name:text label", "monthly_fee:money 10..250", "contract_months:int 0..24",
                "class_credits_per_month:int 0..30", "all_clubs_access:bool", "joining_fee:money 0..199"],
                words=["Off-Peak", "Standard", "Premium All-Access", "Student", "Corporate Wellness",
                       "Family Add-On"]),
            dict(name="membership", prefix="MS", parent="member", refs=["membership_plan"], fields=[
                "agreement_number:code label unique", "started_on:datetime", "ends_on:datetime deadline",
                "class_credits:int 0..30 balance", "billing_day:int 1..28", "freeze_days_used:int 0..90"],
                states=["pending", "active", "frozen", "cancelled"],
                transitions={"activate": "pending>active", "freeze": "active>frozen", "unfreeze": "frozen>active",
                             "cancel": "pending,active,frozen>cancelled"}),
            dict(name="instructor", prefix="IN", fields=[
                "full_name:name label", "email:email unique", "certification:choice ace|nasm|ryt200|stott|afaa",
                "hourly_rate:money 20..120", "specialty:choice cycling|yoga|hiit|pilates|boxing|aquatics"],
                states=["active", "inactive"],
                transitions={"deactivate": "active>inactive", "reactivate": "inactive>active"}),
            dict(name="fitness_class", prefix="FC", plural="fitness_classes", refs=["instructor"], fields=[
                "class_name:text label", "starts_at:datetime deadline", "spots:int 5..40 capacity",
                "studio:choice studio_a|studio_b|cycle_room|pool|boxing_ring",
                "intensity:choice low|moderate|high", "duration_min:int 30..90"],
                states=["scheduled", "cancelled"],
                transitions={"cancel": "scheduled>cancelled", "reinstate": "cancelled>scheduled"},
                words=["Spin 45", "Vinyasa Flow", "HIIT Circuit", "Aqua Aerobics", "Boxing Basics",
                       "Pilates Reformer"]),
            dict(name="class_booking", prefix="CB", parent="fitness_class", refs=["member"], fields=[
                "booking_code:code label unique", "booked_at:datetime", "spot_number:int 1..40",
                "credits_used:int 0..2", "reminder_sent:bool"],
                states=["booked", "attended", "late_cancelled", "no_show", "cancelled"],
                transitions={"check_in": "booked>attended", "late_cancel": "booked>late_cancelled",
                             "mark_no_show": "booked>no_show", "cancel": "booked>cancelled"}),
        ],
    ),
    Domain(
        id="sports_league", sector="sports", title="Youth soccer league",
        description="League administrators register teams into age divisions, clear players' eligibility and "
                    "waivers, and schedule and record matches at league pitches.",
        actor="league administrator",
        entities=[
            dict(name="division", prefix="DV", fields=[
                "division_name:text label", "age_group:choice u8|u10|u12|u14|u16|adult",
                "max_teams:int 4..16 capacity", "registration_fee:money 50..400",
                "season:choice spring|summer|fall|winter", "registration_closes:datetime"],
                states=["registration_open", "in_season", "completed"],
                transitions={"start_season": "registration_open>in_season", "finish_season": "in_season>completed"},
                words=["U10 Girls Blue", "U12 Boys Gold", "U14 Coed Premier", "U8 Rec Coed", "U16 Girls Select",
                       "Adult Co-Rec"]),
            dict(name="team", prefix="TM", parent="division", fields=[
                "team_name:text label", "coach_name:name", "coach_email:email unique",
                "roster_limit:int 10..25 capacity", "home_kit:choice red|blue|green|gold|black|white",
                "sponsor:text", "fees_outstanding:money 0..3000 balance"],
                states=["registered", "approved", "suspended", "withdrawn"],
                transitions={"approve": "registered>approved", "suspend": "approved>suspended",
                             "reinstate": "suspended>approved", "withdraw": "registered,approved,suspended>withdrawn"},
                words=["Riverside Rockets", "Eastside Strikers", "Maple Valley FC", "Thunder 2012",
                       "Harbor City Hawks", "Lakeside United"]),
            dict(name="player", prefix="PL", parent="team", fields=[
                "full_name:name label", "birth_year:int 2006..2019", "jersey_number:int 0..99",
                "position:choice goalkeeper|defender|midfielder|forward", "waiver_signed:bool",
                "guardian_phone:phone"],
                states=["pending", "eligible", "suspended", "released"],
                transitions={"clear_eligibility": "pending>eligible", "suspend": "eligible>suspended",
                             "reinstate": "suspended>eligible", "release": "pending,eligible,suspended>released"}),
            dict(name="pitch", plural="pitches", prefix="PT", fields=[
                "pitch_name:text label", "surface:choice grass|turf|indoor", "floodlights:bool",
                "parking_spaces:int 0..300", "address:text"]),
            dict(name="league_match", prefix="MT", plural="league_matches", parent="pitch", refs=["team"], fields=[
                "match_code:code label unique", "kickoff_at:datetime", "result_entry_closes:datetime deadline",
                "opponent_team:text",
                "home_score:int 0..20", "away_score:int 0..20", "referee:name"],
                states=["scheduled", "played", "postponed", "forfeited", "cancelled"],
                transitions={"record_result": "scheduled>played", "postpone": "scheduled>postponed",
                             "reschedule": "postponed>scheduled", "record_forfeit": "scheduled,postponed>forfeited",
                             "cancel": "scheduled,postponed>cancelled"}),
        ],
    ),
]
