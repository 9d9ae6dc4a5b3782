"""Education domains."""

from synth.procedural.ontology.schema import Domain

_DEPTS = "computer_science|biology|economics|history|engineering|nursing"

DOMAINS = [
    Domain(
        id="course_registration", sector="education", title="Course registration office",
        description="Registrar staff at a university open course sections for enrollment, register students "
                    "into seats, and manage waitlists, drops and holds.",
        actor="registrar clerk",
        entities=[
            dict(name="student", prefix="S", fields=[
                "full_name:name label", "email:email unique", "student_number:code unique",
                f"program:choice {_DEPTS}", "year_level:int 1..5", "credits_remaining:int 0..24 balance"],
                states=["enrolled", "on_hold", "on_leave", "graduated"],
                transitions={"place_hold": "enrolled>on_hold", "release_hold": "on_hold>enrolled",
                             "grant_leave": "enrolled>on_leave", "return_from_leave": "on_leave>enrolled",
                             "graduate": "enrolled>graduated"}),
            dict(name="course", prefix="C", fields=[
                "title:text label", "course_code:code unique", "credits:int 1..6", f"department:choice {_DEPTS}",
                "level:choice intro|intermediate|advanced|graduate", "lab_required:bool"],
                states=["proposed", "active", "retired"],
                transitions={"approve": "proposed>active", "retire": "active>retired"},
                words=["Introduction to Programming", "Cell Biology", "Intermediate Microeconomics",
                       "Modern European History", "Thermodynamics I", "Pharmacology for Nurses"]),
            dict(name="instructor", prefix="I", fields=[
                "full_name:name label", "email:email unique",
                "academic_rank:choice lecturer|assistant_prof|associate_prof|professor",
                f"department:choice {_DEPTS}", "max_sections:int 1..5", "office:code"]),
            dict(name="section", prefix="SEC", parent="course", refs=["instructor"], fields=[
                "section_code:code label unique", "term:choice fall|spring|summer", "seats:int 10..250 capacity",
                "meeting_pattern:choice mwf|tth|weekly_evening|online", "room:code",
                "add_drop_deadline:datetime deadline"],
                states=["planned", "open", "closed", "cancelled"],
                transitions={"open_enrollment": "planned>open", "close_enrollment": "open>closed",
                             "reopen": "closed>open", "cancel": "planned,open>cancelled"}),
            dict(name="enrollment", prefix="EN", parent="section", refs=["student"], fields=[
                "enrollment_code:code label unique", "credits:int 1..6",
                "grading_basis:choice letter|pass_fail|audit", "registered_at:datetime",
                "waitlist_position:int 0..50", "final_grade:choice A|B|C|D|F|none"],
                states=["requested", "registered", "waitlisted", "dropped", "withdrawn", "completed"],
                transitions={"approve": "requested>registered", "waitlist": "requested>waitlisted",
                             "promote": "waitlisted>registered", "drop": "requested,registered,waitlisted>dropped",
                             "withdraw": "registered>withdrawn", "complete": "registered>completed"}),
        ],
    ),
    Domain(
        id="gradebook", sector="education", title="Course gradebook",
        description="Teaching assistants publish assignments in a course gradebook, grade student submissions, "
                    "and rule on grade appeals before grades are locked.",
        actor="teaching assistant",
        entities=[
            dict(name="course_section", prefix="CS", fields=[
                "course_title:text label", "section_code:code unique", "term:choice fall|spring|summer",
                "grading_scale:choice standard|plus_minus|pass_fail", "credit_hours:int 1..5"],
                states=["in_progress", "grades_submitted", "locked"],
                transitions={"submit_grades": "in_progress>grades_submitted",
                             "reopen": "grades_submitted>in_progress", "lock": "grades_submitted>locked"},
                words=["Calculus I", "Organic Chemistry", "World Literature", "Data Structures",
                       "Principles of Marketing", "Statics"]),
            dict(name="student", prefix="ST", fields=[
                "full_name:name label", "email:email unique", "student_number:code unique",
                "accommodations:bool", "advisor:name", "late_days_remaining:int 0..5 balance"]),
            dict(name="assignment", prefix="AS", parent="course_section", fields=[
                "title:text label", "category:choice homework|quiz|midterm|final|project|lab",
                "max_points:int 5..200", "weight_pct:float 0..40", "due_at:datetime",
                "late_penalty_pct:int 0..50"],
                states=["draft", "published", "closed", "graded"],
                transitions={"publish": "draft>published", "close_submissions": "published>closed",
                             "release_grades": "closed>graded"},
                words=["Homework 1: Limits", "Quiz 2", "Midterm Exam", "Lab Report 3", "Final Project Proposal",
                       "Final Exam"]),
            dict(name="submission", prefix="SB", parent="assignment", refs=["student"], fields=[
                "submission_code:code label unique", "submitted_at:datetime", "points_earned:float 0..200",
                "attempt:int 1..3", "late:bool", "file_format:choice pdf|docx|zip|link"],
                states=["submitted", "graded", "returned_for_revision", "excused"],
                transitions={"grade": "submitted>graded", "return_for_revision": "graded>returned_for_revision",
                             "resubmit": "returned_for_revision>submitted", "excuse": "submitted>excused"}),
            dict(name="grade_appeal", prefix="GA", parent="submission", fields=[
                "appeal_code:code label unique", "reason:choice miscalculation|rubric_dispute|missing_work|other",
                "points_requested:float 0..50", "filed_at:datetime", "respond_by:datetime deadline"],
                states=["filed", "under_review", "granted", "denied"],
                transitions={"start_review": "filed>under_review", "grant": "under_review>granted",
                             "deny": "filed,under_review>denied"}),
        ],
    ),
]
