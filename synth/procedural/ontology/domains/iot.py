"""IoT domains."""

from synth.procedural.ontology.schema import Domain

DOMAINS = [
    Domain(
        id="smart_home", sector="iot", title="Smart home hub",
        description="Support agents for a smart-home platform manage account holders' homes, pair and "
                    "update devices, arm security modes, and triage device events.",
        actor="smart-home support agent",
        entities=[
            dict(name="account_holder", prefix="AC", fields=[
                "full_name:name label", "email:email unique", "phone:phone", "plan:choice free|plus|pro",
                "two_factor:bool"],
                states=["active", "locked"], transitions={"lock": "active>locked", "unlock": "locked>active"}),
            dict(name="home", prefix="HM", parent="account_holder", fields=[
                "home_name:text label", "address:text", "timezone:choice est|cst|mst|pst|cet|jst",
                "device_slots:int 5..80 capacity", "alarm_contact:phone"],
                states=["disarmed", "armed_stay", "armed_away", "alarm_triggered"],
                transitions={"arm_stay": "disarmed>armed_stay", "arm_away": "disarmed,armed_stay>armed_away",
                             "disarm": "armed_stay,armed_away,alarm_triggered>disarmed",
                             "trigger_alarm": "armed_stay,armed_away>alarm_triggered"},
                words=["Maple Street House", "Lake Cabin", "Downtown Loft", "Beach Condo", "Grandma's Bungalow"]),
            dict(name="device", prefix="DV", parent="home", fields=[
                "device_name:text label", "serial:code unique",
                "kind:choice thermostat|smart_lock|camera|light|plug|smoke_detector", "firmware:code",
                "battery_pct:int 0..100", "room:choice kitchen|living_room|bedroom|garage|entry|office"],
                states=["online", "offline", "updating", "removed"],
                transitions={"mark_offline": "online>offline", "reconnect": "offline>online",
                             "start_update": "online>updating", "finish_update": "updating>online",
                             "unpair": "online,offline>removed"}),
            dict(name="automation", prefix="AU", parent="device", fields=[
                "automation_name:text label", "trigger:choice time|motion|door_open|temperature|sunset",
                "action:choice turn_on|turn_off|lock|notify|set_temperature", "runs_today:int 0..500",
                "cooldown_min:int 0..120", "quiet_hours:bool"],
                states=["enabled", "disabled"],
                transitions={"disable": "enabled>disabled", "enable": "disabled>enabled"},
                words=["Goodnight lock-up", "Porch light at sunset", "Away mode heat setback",
                       "Garage left open alert", "Morning warm-up", "Leak detected shutoff"]),
            dict(name="device_event", prefix="EV", parent="device", fields=[
                "event_code:code label unique",
                "event_type:choice motion|door_open|door_close|temp_alert|offline|low_battery",
                "occurred_at:datetime", "severity:choice info|warning|critical", "reading:float -40..150"],
                states=["new", "acknowledged", "dismissed"],
                transitions={"acknowledge": "new>acknowledged", "dismiss": "new,acknowledged>dismissed"}),
            dict(name="access_code", prefix="PIN", parent="device", fields=[
                "code_name:text label", "pin:code", "valid_until:datetime deadline", "uses_left:int 0..50 balance",
                "schedule:choice always|weekdays|weekends|one_time", "notify_on_use:bool"],
                states=["active", "suspended", "revoked"],
                transitions={"suspend": "active>suspended", "resume": "suspended>active",
                             "revoke": "active,suspended>revoked"}),
        ],
    ),
    Domain(
        id="industrial_sensors", sector="iot", title="Industrial sensor network",
        description="Reliability engineers at a process plant commission gateways and sensors on plant "
                    "equipment, keep calibrations current, and work through threshold alarms.",
        actor="reliability engineer",
        entities=[
            dict(name="plant_site", prefix="ST", fields=[
                "site_name:text label", "site_code:code unique", "region:choice americas|emea|apac",
                "hazardous_area:bool", "shift_count:int 1..3"],
                words=["Baytown Refinery", "Ludwigshafen Unit 4", "Jurong Island Plant", "Sarnia Chemical Works",
                       "Monterrey Brewery"]),
            dict(name="equipment", plural="equipment_units", prefix="EQ", parent="plant_site", fields=[
                "asset_name:text label", "asset_tag:code unique",
                "asset_type:choice pump|compressor|boiler|conveyor|motor|chiller", "criticality:choice a|b|c",
                "install_year:int 1990..2025"],
                states=["operating", "standby", "under_repair"],
                transitions={"put_on_standby": "operating>standby", "start_up": "standby,under_repair>operating",
                             "take_for_repair": "operating,standby>under_repair"},
                words=["Cooling Water Pump P-101", "Air Compressor AC-3", "Boiler B-2", "Conveyor Line 4",
                       "Chiller CH-1", "Mixer Motor M-7"]),
            dict(name="gateway", prefix="GW", parent="plant_site", fields=[
                "hostname:code label unique", "model:choice moxa_uc|siemens_iot2050|advantech_eki|cisco_ir1101",
                "firmware:code", "sensor_ports:int 4..64 capacity", "uplink:choice ethernet|lte|wifi|lorawan",
                "last_seen:datetime"],
                states=["provisioning", "online", "offline", "decommissioned"],
                transitions={"activate": "provisioning>online", "mark_offline": "online>offline",
                             "restore": "offline>online", "decommission": "online,offline>decommissioned"}),
            dict(name="sensor", prefix="SN", parent="gateway", refs=["equipment"], fields=[
                "tag:code label unique", "measurand:choice temperature|pressure|vibration|flow|humidity|current",
                "sample_rate_hz:float 0.1..1000", "calibration_due:datetime",
                "low_threshold:float -50..500", "high_threshold:float 0..2000"],
                states=["active", "faulty", "in_calibration", "retired"],
                transitions={"flag_fault": "active>faulty", "send_to_calibration": "active,faulty>in_calibration",
                             "return_to_service": "in_calibration>active", "retire": "faulty,in_calibration>retired"}),
            dict(name="alarm", prefix="AL", parent="sensor", fields=[
                "alarm_code:code label unique", "severity:choice low|medium|high|critical",
                "trigger_value:float -50..2000", "raised_at:datetime", "ack_due:datetime",
                "threshold_type:choice high|low|rate_of_change|stale_data"],
                states=["raised", "acknowledged", "shelved", "cleared"],
                transitions={"acknowledge": "raised>acknowledged", "shelve": "raised,acknowledged>shelved",
                             "unshelve": "shelved>acknowledged", "clear": "acknowledged>cleared"}),
        ],
    ),
]
