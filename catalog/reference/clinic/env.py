"""An outpatient clinic: booking doctors' time under opening hours, capacity and cancellation rules."""

from __future__ import annotations

import datetime as dt

from sqlmodel import Field

from catalog.envkit import Env, fail, ok, table_base, tool

OPEN_HOUR, CLOSE_HOUR = 8, 18
SLOT_MINUTES = 15
MIN_NOTICE = dt.timedelta(hours=1)
LATE_CANCEL_WINDOW = dt.timedelta(hours=24)
LATE_CANCEL_FEE = 25.0
MAX_UPCOMING = 2
NO_SHOW_BLOCK = 3
INSURED_SHARE = 0.2

Table = table_base()


class Patient(Table, table=True):  # type: ignore[call-arg]
    """A registered patient."""

    __tablename__ = "patients"
    id: str = Field(primary_key=True, description="Patient id, such as 'P001'.")
    name: str = Field(description="Full name.")
    birth_date: dt.date = Field(description="Date of birth.")
    phone: str = Field(description="Contact phone number.")
    insured: bool = Field(False, description="Insured patients pay 20% of the visit fee.")
    balance_due: float = Field(0.0, description="What the patient owes, in EUR.")
    visits: int = Field(0, description="Completed visits.")
    no_shows: int = Field(0, description="Missed appointments.")
    last_visit_at: dt.datetime | None = Field(None, description="End of the last completed visit.")
    status: str = Field("active", description="active | blocked (after 3 no-shows)")


class Doctor(Table, table=True):  # type: ignore[call-arg]
    """A doctor seeing patients at the clinic."""

    __tablename__ = "doctors"
    id: str = Field(primary_key=True, description="Doctor id, such as 'D001'.")
    name: str = Field(description="Full name.")
    specialty: str = Field(description="Specialty, such as 'cardiology'.")
    daily_capacity: int = Field(description="Appointments the doctor takes per day.")
    visit_fee: float = Field(description="Fee of a 30-minute visit, in EUR.")
    active: bool = Field(True, description="Whether the doctor takes appointments.")


class Appointment(Table, table=True):  # type: ignore[call-arg]
    """A booked slot of a doctor's time for a patient."""

    __tablename__ = "appointments"
    id: str = Field(primary_key=True, description="Appointment id, such as 'appt-1'.")
    patient_id: str = Field(foreign_key="patients.id", description="The patient.")
    doctor_id: str = Field(foreign_key="doctors.id", description="The doctor.")
    starts_at: dt.datetime = Field(description="Start time (UTC).")
    duration_min: int = Field(30, description="Length in minutes: 15, 30, 45 or 60.")
    status: str = Field("booked", description="booked | checked_in | completed | cancelled | no_show")
    reason: str = Field(description="Why the patient comes.")
    fee: float = Field(0.0, description="What the patient was charged for this appointment.")
    diagnosis: str | None = Field(None, description="Set when the visit is completed.")
    completed_at: dt.datetime | None = Field(None, description="When the visit ended.")
    follow_up_of: str | None = Field(None, description="The visit this one follows up.")


def _parse_time(text: str) -> dt.datetime | None:
    try:
        value = dt.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


class ClinicEnv(Env):
    """Front desk of an outpatient clinic."""

    tables = (Patient, Doctor, Appointment)

    def _slot_problem(self, doctor: Doctor, start: dt.datetime, minutes: int, ignore: str | None = None) -> str | None:
        """Return why the doctor cannot take this slot, or None (shared by booking and rescheduling)."""
        end = start + dt.timedelta(minutes=minutes)
        if start < self.now() + MIN_NOTICE:
            return "Appointments must be booked at least 1 hour ahead"
        if start.weekday() >= 5:
            return "The clinic is closed at weekends"
        if start.minute % SLOT_MINUTES or start.second or start.microsecond:
            return "Appointments start on the quarter hour"
        if start.hour < OPEN_HOUR or end > start.replace(hour=CLOSE_HOUR, minute=0):
            return "The clinic is open from 08:00 to 18:00"
        day_start = start.replace(hour=0, minute=0)
        same_day = [a for a in self.select(Appointment, Appointment.doctor_id == doctor.id,
                                           Appointment.starts_at >= day_start,
                                           Appointment.starts_at < day_start + dt.timedelta(days=1))
                    if a.status in ("booked", "checked_in") and a.id != ignore]
        if len(same_day) >= doctor.daily_capacity:
            return f"Doctor {doctor.id} is fully booked on {start.date()}"
        for other in same_day:
            other_end = other.starts_at + dt.timedelta(minutes=other.duration_min)
            if other.starts_at < end and start < other_end:
                return f"Doctor {doctor.id} already has an appointment at {other.starts_at.strftime('%H:%M')}"
        return None

    # --- reads --------------------------------------------------------------------------
    @tool(kind="read")
    def find_doctors(self, specialty: str) -> dict:
        """List active doctors of a specialty.

        Args:
            specialty: Such as 'dermatology'.
        """
        doctors = self.select(Doctor, Doctor.specialty == specialty.strip().lower(), Doctor.active == True)  # noqa: E712
        if not doctors:
            return fail(f"No active doctor for {specialty}")
        return ok(data=doctors)

    @tool(kind="read")
    def get_patient(self, patient_id: str) -> dict:
        """Show a patient's record.

        Args:
            patient_id: The patient, such as 'P001'.
        """
        patient = self.get(Patient, patient_id)
        if patient is None:
            return fail(f"Patient {patient_id} not found")
        return ok(data=patient)

    @tool(kind="read")
    def get_doctor_schedule(self, doctor_id: str, day: str) -> dict:
        """List a doctor's booked appointments on one day.

        Args:
            doctor_id: The doctor, such as 'D001'.
            day: Date as YYYY-MM-DD, such as '2026-03-03'.
        """
        if self.get(Doctor, doctor_id) is None:
            return fail(f"Doctor {doctor_id} not found")
        start = _parse_time(day)
        if start is None or len(day) != 10:
            return fail(f"Invalid day {day}; use YYYY-MM-DD")
        rows = self.select(Appointment, Appointment.doctor_id == doctor_id, Appointment.starts_at >= start,
                           Appointment.starts_at < start + dt.timedelta(days=1), order_by=Appointment.starts_at)
        return ok(data=[{"id": a.id, "starts_at": a.starts_at, "duration_min": a.duration_min, "status": a.status}
                        for a in rows if a.status in ("booked", "checked_in", "completed")])

    @tool(kind="read")
    def list_patient_appointments(self, patient_id: str) -> dict:
        """List a patient's appointments in time order.

        Args:
            patient_id: The patient, such as 'P001'.
        """
        if self.get(Patient, patient_id) is None:
            return fail(f"Patient {patient_id} not found")
        return ok(data=self.select(Appointment, Appointment.patient_id == patient_id,
                                   order_by=[Appointment.starts_at, Appointment.id]))

    # --- writes -------------------------------------------------------------------------
    @tool(kind="write")
    def register_patient(self, name: str, birth_date: str, phone: str, insured: bool = False) -> dict:
        """Register a new patient.

        Args:
            name: Full name, such as 'Noor Haddad'.
            birth_date: Date of birth as YYYY-MM-DD, such as '1988-04-12'.
            phone: Contact number, such as '+49 30 1234567'.
            insured: Whether the patient has insurance, such as true.
        """
        if not name.strip():
            return fail("Name must not be empty")
        try:
            born = dt.date.fromisoformat(birth_date)
        except (TypeError, ValueError):
            return fail(f"Invalid birth date {birth_date}; use YYYY-MM-DD")
        if born > self.now().date():
            return fail("Birth date lies in the future")
        if sum(ch.isdigit() for ch in phone) < 6:
            return fail(f"Invalid phone number {phone}")
        patient = Patient(id=self.new_id("patient"), name=name.strip(), birth_date=born, phone=phone, insured=insured)
        self.add(patient)
        return ok(data={"patient_id": patient.id})

    @tool(kind="write")
    def book_appointment(self, patient_id: str, doctor_id: str, starts_at: str, reason: str,
                         duration_min: int = 30) -> dict:
        """Book a doctor for a patient (weekdays 08:00-18:00, quarter hours, at least 1 hour ahead).

        Args:
            patient_id: The patient, such as 'P001'.
            doctor_id: The doctor, such as 'D002'.
            starts_at: Start as ISO time in UTC, such as '2026-03-03T09:30:00'.
            reason: Why the patient comes, such as 'persistent cough'.
            duration_min: 15, 30, 45 or 60 minutes, such as 30.
        """
        patient = self.get(Patient, patient_id)
        if patient is None:
            return fail(f"Patient {patient_id} not found")
        if patient.status != "active":
            return fail(f"Patient {patient_id} is blocked after repeated no-shows")
        doctor = self.get(Doctor, doctor_id)
        if doctor is None or not doctor.active:
            return fail(f"Doctor {doctor_id} is not available")
        if duration_min not in (15, 30, 45, 60):
            return fail(f"Invalid duration {duration_min}; use 15, 30, 45 or 60")
        if not reason.strip():
            return fail("A reason is required")
        start = _parse_time(starts_at)
        if start is None:
            return fail(f"Invalid time {starts_at}")
        upcoming = [a for a in self.select(Appointment, Appointment.patient_id == patient_id)
                    if a.status == "booked" and a.starts_at >= self.now()]
        if len(upcoming) >= MAX_UPCOMING:
            return fail(f"Patient {patient_id} already has {MAX_UPCOMING} upcoming appointments")
        problem = self._slot_problem(doctor, start, duration_min)
        if problem:
            return fail(problem)
        appointment = Appointment(id=self.new_id("appt"), patient_id=patient_id, doctor_id=doctor_id, starts_at=start,
                                  duration_min=duration_min, reason=reason.strip())
        self.add(appointment)
        return ok(data={"appointment_id": appointment.id, "starts_at": start})

    @tool(kind="write")
    def cancel_appointment(self, appointment_id: str) -> dict:
        """Cancel a booked appointment; less than 24 hours ahead costs a 25 EUR fee.

        Args:
            appointment_id: The appointment, such as 'appt-2'.
        """
        appointment = self.get(Appointment, appointment_id)
        if appointment is None:
            return fail(f"Appointment {appointment_id} not found")
        if appointment.status != "booked":
            return fail(f"Appointment {appointment_id} is {appointment.status}")
        appointment.status = "cancelled"
        if appointment.starts_at - self.now() < LATE_CANCEL_WINDOW:
            patient = self.get(Patient, appointment.patient_id)
            appointment.fee = LATE_CANCEL_FEE
            patient.balance_due = round(patient.balance_due + LATE_CANCEL_FEE, 2)
            return ok(data={"fee": LATE_CANCEL_FEE}, message="Cancelled late; a fee was charged")
        return ok(message="Cancelled")

    @tool(kind="write")
    def reschedule_appointment(self, appointment_id: str, new_starts_at: str) -> dict:
        """Move a booked appointment to another time with the same doctor.

        Args:
            appointment_id: The appointment, such as 'appt-2'.
            new_starts_at: New start as ISO time in UTC, such as '2026-03-04T14:00:00'.
        """
        appointment = self.get(Appointment, appointment_id)
        if appointment is None:
            return fail(f"Appointment {appointment_id} not found")
        if appointment.status != "booked":
            return fail(f"Appointment {appointment_id} is {appointment.status}")
        start = _parse_time(new_starts_at)
        if start is None:
            return fail(f"Invalid time {new_starts_at}")
        if start == appointment.starts_at:
            return fail("The new time equals the current one")
        doctor = self.get(Doctor, appointment.doctor_id)
        problem = self._slot_problem(doctor, start, appointment.duration_min, ignore=appointment.id)
        if problem:
            return fail(problem)
        appointment.starts_at = start
        return ok(data={"starts_at": start})

    @tool(kind="write")
    def check_in(self, appointment_id: str) -> dict:
        """Check a patient in, from 60 minutes before the start until 15 minutes after.

        Args:
            appointment_id: The appointment, such as 'appt-1'.
        """
        appointment = self.get(Appointment, appointment_id)
        if appointment is None:
            return fail(f"Appointment {appointment_id} not found")
        if appointment.status != "booked":
            return fail(f"Appointment {appointment_id} is {appointment.status}")
        offset = self.now() - appointment.starts_at
        if offset < -dt.timedelta(minutes=60) or offset > dt.timedelta(minutes=15):
            return fail("Check-in opens 60 minutes before and closes 15 minutes after the start")
        appointment.status = "checked_in"
        return ok(message="Checked in")

    @tool(kind="write")
    def complete_visit(self, appointment_id: str, diagnosis: str, follow_up_days: int = 0) -> dict:
        """Finish a checked-in visit: record the diagnosis, charge the fee, optionally book a follow-up at the same time.

        Args:
            appointment_id: The checked-in appointment, such as 'appt-1'.
            diagnosis: What the doctor found, such as 'seasonal allergy'.
            follow_up_days: Book a follow-up this many days later (0 for none, at most 90), such as 14.
        """
        appointment = self.get(Appointment, appointment_id)
        if appointment is None:
            return fail(f"Appointment {appointment_id} not found")
        if appointment.status != "checked_in":
            return fail(f"Appointment {appointment_id} is {appointment.status}, not checked in")
        if not diagnosis.strip():
            return fail("A diagnosis is required")
        if follow_up_days < 0 or follow_up_days > 90:
            return fail(f"follow_up_days must be between 0 and 90, got {follow_up_days}")
        patient = self.get(Patient, appointment.patient_id)
        doctor = self.get(Doctor, appointment.doctor_id)
        follow_up = None
        if follow_up_days:
            start = appointment.starts_at + dt.timedelta(days=follow_up_days)
            problem = self._slot_problem(doctor, start, appointment.duration_min)
            if problem:
                return fail(f"Follow-up not possible: {problem}")
            follow_up = Appointment(id=self.new_id("appt"), patient_id=patient.id, doctor_id=doctor.id,
                                    starts_at=start, duration_min=appointment.duration_min,
                                    reason=f"follow-up: {diagnosis.strip()}", follow_up_of=appointment.id)
            self.add(follow_up)
        now = self.now()
        fee = round(doctor.visit_fee * appointment.duration_min / 30 * (INSURED_SHARE if patient.insured else 1.0), 2)
        appointment.status = "completed"
        appointment.completed_at = now
        appointment.diagnosis = diagnosis.strip()
        appointment.fee = fee
        patient.visits += 1
        patient.balance_due = round(patient.balance_due + fee, 2)
        patient.last_visit_at = now
        return ok(data={"fee": fee, "follow_up_id": follow_up.id if follow_up else None})

    @tool(kind="write")
    def mark_no_show(self, appointment_id: str) -> dict:
        """Record that a patient missed a booked appointment (25 EUR fee; 3 no-shows block the patient).

        Args:
            appointment_id: The missed appointment, such as 'appt-3'.
        """
        appointment = self.get(Appointment, appointment_id)
        if appointment is None:
            return fail(f"Appointment {appointment_id} not found")
        if appointment.status != "booked":
            return fail(f"Appointment {appointment_id} is {appointment.status}")
        if self.now() < appointment.starts_at + dt.timedelta(minutes=15):
            return fail("A no-show can be recorded only 15 minutes after the start")
        patient = self.get(Patient, appointment.patient_id)
        appointment.status = "no_show"
        appointment.fee = LATE_CANCEL_FEE
        patient.no_shows += 1
        patient.balance_due = round(patient.balance_due + LATE_CANCEL_FEE, 2)
        if patient.no_shows >= NO_SHOW_BLOCK:
            patient.status = "blocked"
        return ok(data={"no_shows": patient.no_shows, "status": patient.status})
