"""A lending library: members borrow, renew and return books; late returns and losses cost fines."""

from __future__ import annotations

import datetime as dt

from sqlmodel import Field, col

from catalog.envkit import Env, fail, ok, table_base, tool

LOAN_DAYS = 14
MAX_RENEWALS = 2
FINE_PER_DAY = 0.5
FINE_BLOCK = 10.0

Table = table_base()


class Member(Table, table=True):  # type: ignore[call-arg]
    """A library member."""

    __tablename__ = "members"
    id: str = Field(primary_key=True, description="Member id, such as 'M001'.")
    name: str = Field(description="Full name.")
    email: str = Field(unique=True, description="Contact email, unique among members.")
    status: str = Field("active", description="active | suspended | closed")
    max_loans: int = Field(3, description="How many active loans the member may hold.")
    active_loans: int = Field(0, description="Loans currently out.")
    fines_due: float = Field(0.0, description="Unpaid fines in EUR.")
    lost_count: int = Field(0, description="Books this member has lost.")
    joined_at: dt.datetime = Field(description="When the member registered (UTC).")


class Book(Table, table=True):  # type: ignore[call-arg]
    """One physical copy of a book."""

    __tablename__ = "books"
    id: str = Field(primary_key=True, description="Book id, such as 'B001'.")
    title: str = Field(description="Title.")
    author: str = Field(description="Author.")
    genre: str = Field(description="Genre, such as 'fiction'.")
    status: str = Field("available", description="available | on_loan | reserved | lost")
    replacement_cost: float = Field(description="What losing the copy costs, in EUR.")
    times_borrowed: int = Field(0, description="How often the copy was lent.")
    hold_member_id: str | None = Field(None, foreign_key="members.id", description="Member holding a reservation.")
    lost_at: dt.datetime | None = Field(None, description="When the copy was declared lost.")


class Loan(Table, table=True):  # type: ignore[call-arg]
    """A book lent to a member."""

    __tablename__ = "loans"
    id: str = Field(primary_key=True, description="Loan id, such as 'loan-1'.")
    book_id: str = Field(foreign_key="books.id", description="The lent book.")
    member_id: str = Field(foreign_key="members.id", description="The borrower.")
    borrowed_at: dt.datetime = Field(description="When the loan started.")
    due_at: dt.datetime = Field(description="When the book is due back.")
    returned_at: dt.datetime | None = Field(None, description="When the loan ended (returned or lost).")
    renewals: int = Field(0, description="How often the loan was renewed.")
    status: str = Field("active", description="active | returned | lost")


class Fine(Table, table=True):  # type: ignore[call-arg]
    """Money a member owes the library."""

    __tablename__ = "fines"
    id: str = Field(primary_key=True, description="Fine id, such as 'fine-1'.")
    member_id: str = Field(foreign_key="members.id", description="Who owes it.")
    loan_id: str = Field(foreign_key="loans.id", description="The loan it arose from.")
    amount: float = Field(description="Amount still owed, in EUR.")
    reason: str = Field(description="late | lost")
    issued_at: dt.datetime = Field(description="When the fine was issued.")
    paid: bool = Field(False, description="True once fully paid.")


class LibraryEnv(Env):
    """Circulation desk of a lending library."""

    tables = (Member, Book, Loan, Fine)

    # --- helpers ------------------------------------------------------------------------
    def _issue_fine(self, member: Member, loan: Loan, amount: float, reason: str) -> Fine:
        fine = Fine(id=self.new_id("fine"), member_id=member.id, loan_id=loan.id, amount=round(amount, 2),
                    reason=reason, issued_at=self.now())
        self.add(fine)
        member.fines_due = round(member.fines_due + fine.amount, 2)
        return fine

    # --- reads --------------------------------------------------------------------------
    @tool(kind="read")
    def get_member(self, member_id: str) -> dict:
        """Show a member's account: status, loans out, fines due.

        Args:
            member_id: The member, such as 'M001'.
        """
        member = self.get(Member, member_id)
        if member is None:
            return fail(f"Member {member_id} not found")
        return ok(data=member)

    @tool(kind="read")
    def search_books(self, query: str, available_only: bool = False) -> dict:
        """Find books whose title or author contains the query (case-insensitive).

        Args:
            query: Text to look for, such as 'le guin'.
            available_only: Only list copies that can be borrowed now, such as true.
        """
        if not query.strip():
            return fail("Query must not be empty")
        pattern = query.strip()
        books = self.select(Book, col(Book.title).icontains(pattern) | col(Book.author).icontains(pattern))
        if available_only:
            books = [b for b in books if b.status == "available"]
        return ok(data=[{"id": b.id, "title": b.title, "author": b.author, "status": b.status} for b in books])

    @tool(kind="read")
    def list_member_loans(self, member_id: str, include_returned: bool = False) -> dict:
        """List a member's loans, newest first.

        Args:
            member_id: The member, such as 'M001'.
            include_returned: Also list finished loans, such as false.
        """
        if self.get(Member, member_id) is None:
            return fail(f"Member {member_id} not found")
        loans = self.select(Loan, Loan.member_id == member_id, order_by=[col(Loan.borrowed_at).desc(), Loan.id])
        if not include_returned:
            loans = [loan for loan in loans if loan.status == "active"]
        return ok(data=loans)

    @tool(kind="read")
    def list_member_fines(self, member_id: str) -> dict:
        """List a member's unpaid fines.

        Args:
            member_id: The member, such as 'M001'.
        """
        if self.get(Member, member_id) is None:
            return fail(f"Member {member_id} not found")
        fines = self.select(Fine, Fine.member_id == member_id, Fine.paid == False)  # noqa: E712
        return ok(data=fines)

    # --- writes -------------------------------------------------------------------------
    @tool(kind="write")
    def register_member(self, name: str, email: str, max_loans: int = 3) -> dict:
        """Register a new member.

        Args:
            name: Full name, such as 'Ada Lovelace'.
            email: Contact email, unique among members, such as 'ada@example.org'.
            max_loans: Loan limit between 1 and 10, such as 3.
        """
        if not name.strip():
            return fail("Name must not be empty")
        if "@" not in email:
            return fail(f"Invalid email {email}")
        if max_loans < 1 or max_loans > 10:
            return fail(f"max_loans must be between 1 and 10, got {max_loans}")
        if self.select(Member, Member.email == email):
            return fail(f"Email {email} is already registered")
        member = Member(id=self.new_id("member"), name=name.strip(), email=email, max_loans=max_loans,
                        joined_at=self.now())
        self.add(member)
        return ok(data={"member_id": member.id}, message=f"Registered {member.name}")

    @tool(kind="write")
    def borrow_book(self, member_id: str, book_id: str) -> dict:
        """Lend a book to a member for 14 days.

        Args:
            member_id: The borrower, such as 'M001'.
            book_id: The copy to lend, such as 'B001'.
        """
        member = self.get(Member, member_id)
        if member is None:
            return fail(f"Member {member_id} not found")
        if member.status != "active":
            return fail(f"Member {member_id} is {member.status}")
        if member.fines_due >= FINE_BLOCK:
            return fail(f"Member {member_id} owes {member.fines_due:.2f} EUR in fines")
        if member.active_loans >= member.max_loans:
            return fail(f"Member {member_id} already has {member.active_loans} loans (limit {member.max_loans})")
        book = self.get(Book, book_id)
        if book is None:
            return fail(f"Book {book_id} not found")
        if book.status == "reserved" and book.hold_member_id != member_id:
            return fail(f"Book {book_id} is reserved for another member")
        if book.status not in ("available", "reserved"):
            return fail(f"Book {book_id} is {book.status}")
        now = self.now()
        loan = Loan(id=self.new_id("loan"), book_id=book_id, member_id=member_id, borrowed_at=now,
                    due_at=now + dt.timedelta(days=LOAN_DAYS))
        self.add(loan)
        book.status = "on_loan"
        book.hold_member_id = None
        book.times_borrowed += 1
        member.active_loans += 1
        return ok(data={"loan_id": loan.id, "due_at": loan.due_at}, message=f"Lent {book.title}")

    @tool(kind="write")
    def return_book(self, loan_id: str) -> dict:
        """Take a lent book back; a late return is fined 0.50 EUR per day, at most the replacement cost.

        Args:
            loan_id: The loan, such as 'loan-1'.
        """
        loan = self.get(Loan, loan_id)
        if loan is None:
            return fail(f"Loan {loan_id} not found")
        if loan.status != "active":
            return fail(f"Loan {loan_id} is already {loan.status}")
        book = self.get(Book, loan.book_id)
        member = self.get(Member, loan.member_id)
        now = self.now()
        loan.status = "returned"
        loan.returned_at = now
        book.status = "reserved" if book.hold_member_id else "available"
        member.active_loans -= 1
        days_late = (now - loan.due_at).days
        if days_late > 0:
            fine = self._issue_fine(member, loan, min(days_late * FINE_PER_DAY, book.replacement_cost), "late")
            return ok(data={"fine_id": fine.id, "amount": fine.amount}, message=f"Returned {days_late} days late")
        return ok(message=f"Returned {book.title}")

    @tool(kind="write")
    def renew_loan(self, loan_id: str) -> dict:
        """Extend an active loan by 14 days from its due date (at most twice, never once overdue).

        Args:
            loan_id: The loan, such as 'loan-1'.
        """
        loan = self.get(Loan, loan_id)
        if loan is None:
            return fail(f"Loan {loan_id} not found")
        if loan.status != "active":
            return fail(f"Loan {loan_id} is {loan.status}")
        if loan.renewals >= MAX_RENEWALS:
            return fail(f"Loan {loan_id} was already renewed {loan.renewals} times")
        if loan.due_at < self.now():
            return fail(f"Loan {loan_id} is overdue and cannot be renewed")
        member = self.get(Member, loan.member_id)
        if member.status != "active":
            return fail(f"Member {member.id} is {member.status}")
        book = self.get(Book, loan.book_id)
        if book.hold_member_id is not None:
            return fail(f"Book {book.id} is on hold for another member")
        loan.due_at = loan.due_at + dt.timedelta(days=LOAN_DAYS)
        loan.renewals += 1
        return ok(data={"due_at": loan.due_at}, message=f"Renewed until {loan.due_at.date()}")

    @tool(kind="write")
    def place_hold(self, member_id: str, book_id: str) -> dict:
        """Reserve a book that is out on loan, so it is kept for the member when it comes back.

        Args:
            member_id: The member reserving, such as 'M002'.
            book_id: The copy, such as 'B003'.
        """
        member = self.get(Member, member_id)
        if member is None:
            return fail(f"Member {member_id} not found")
        if member.status != "active":
            return fail(f"Member {member_id} is {member.status}")
        book = self.get(Book, book_id)
        if book is None:
            return fail(f"Book {book_id} not found")
        if book.status != "on_loan":
            return fail(f"Book {book_id} is {book.status}; only books on loan can be held")
        if book.hold_member_id is not None:
            return fail(f"Book {book_id} already has a hold")
        if self.select(Loan, Loan.book_id == book_id, Loan.member_id == member_id, Loan.status == "active"):
            return fail(f"Member {member_id} is the current borrower of {book_id}")
        book.hold_member_id = member_id
        return ok(message=f"Hold placed on {book.title}")

    @tool(kind="write")
    def pay_fine(self, fine_id: str, amount: float) -> dict:
        """Pay all or part of a fine.

        Args:
            fine_id: The fine, such as 'fine-1'.
            amount: Amount paid in EUR, more than 0 and at most what is owed, such as 2.5.
        """
        fine = self.get(Fine, fine_id)
        if fine is None:
            return fail(f"Fine {fine_id} not found")
        if fine.paid:
            return fail(f"Fine {fine_id} is already paid")
        if amount <= 0:
            return fail(f"Amount must be positive, got {amount}")
        if amount > fine.amount:
            return fail(f"Amount {amount} exceeds the {fine.amount:.2f} EUR owed")
        member = self.get(Member, fine.member_id)
        fine.amount = round(fine.amount - amount, 2)
        fine.paid = fine.amount == 0
        member.fines_due = round(max(member.fines_due - amount, 0.0), 2)
        return ok(data={"remaining": fine.amount}, message="Payment recorded")

    @tool(kind="write")
    def declare_book_lost(self, loan_id: str) -> dict:
        """Close an active loan as lost: the copy leaves circulation and its replacement cost is fined.

        Args:
            loan_id: The loan of the lost copy, such as 'loan-2'.
        """
        loan = self.get(Loan, loan_id)
        if loan is None:
            return fail(f"Loan {loan_id} not found")
        if loan.status != "active":
            return fail(f"Loan {loan_id} is {loan.status}")
        book = self.get(Book, loan.book_id)
        member = self.get(Member, loan.member_id)
        now = self.now()
        loan.status = "lost"
        loan.returned_at = now
        book.status = "lost"
        book.lost_at = now
        book.hold_member_id = None
        member.active_loans -= 1
        member.lost_count += 1
        fine = self._issue_fine(member, loan, book.replacement_cost, "lost")
        return ok(data={"fine_id": fine.id, "amount": fine.amount}, message=f"{book.title} declared lost")

    @tool(kind="write")
    def suspend_member(self, member_id: str, reason: str) -> dict:
        """Suspend a member's borrowing rights.

        Args:
            member_id: The member, such as 'M003'.
            reason: Why, such as 'repeated late returns'.
        """
        member = self.get(Member, member_id)
        if member is None:
            return fail(f"Member {member_id} not found")
        if member.status != "active":
            return fail(f"Member {member_id} is already {member.status}")
        if not reason.strip():
            return fail("A reason is required")
        member.status = "suspended"
        return ok(message=f"Member {member_id} suspended: {reason.strip()}")
