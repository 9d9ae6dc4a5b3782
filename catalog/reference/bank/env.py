"""A retail bank: accounts, deposits, withdrawals and transfers under limits, fees and freezes."""

from __future__ import annotations

import datetime as dt

from sqlmodel import Field, col

from catalog.envkit import Env, fail, ok, table_base, tool

CURRENCIES = ("EUR", "USD", "GBP")
ACCOUNT_TYPES = ("checking", "savings")
MAX_OPEN_ACCOUNTS = 3
EXTERNAL_FEE = 1.0
REVERSAL_WINDOW = dt.timedelta(hours=24)

Table = table_base()


class Customer(Table, table=True):  # type: ignore[call-arg]
    """A customer of the bank."""

    __tablename__ = "customers"
    id: str = Field(primary_key=True, description="Customer id, such as 'C001'.")
    name: str = Field(description="Full name.")
    kyc_verified: bool = Field(False, description="Identity checked; required to open accounts.")
    status: str = Field("active", description="active | blocked")


class Account(Table, table=True):  # type: ignore[call-arg]
    """A current (checking) or savings account."""

    __tablename__ = "accounts"
    id: str = Field(primary_key=True, description="Account id, such as 'A001'.")
    customer_id: str = Field(foreign_key="customers.id", description="Owner.")
    type: str = Field(description="checking | savings")
    currency: str = Field(description="EUR | USD | GBP")
    balance: float = Field(0.0, description="Balance in the account's currency.")
    overdraft_limit: float = Field(0.0, description="How far below zero a checking account may go.")
    daily_limit: float = Field(1000.0, description="Outgoing money allowed per day.")
    withdrawn_today: float = Field(0.0, description="Outgoing money so far today.")
    status: str = Field("open", description="open | frozen | closed")
    freeze_reason: str | None = Field(None, description="Why the account is frozen.")
    opened_at: dt.datetime = Field(description="When the account was opened.")
    closed_at: dt.datetime | None = Field(None, description="When the account was closed.")
    last_activity_at: dt.datetime | None = Field(None, description="Last money movement.")


class Transfer(Table, table=True):  # type: ignore[call-arg]
    """One money movement; deposits have no source, withdrawals no destination."""

    __tablename__ = "transfers"
    id: str = Field(primary_key=True, description="Transfer id, such as 'tx-1'.")
    kind: str = Field(description="deposit | withdrawal | transfer | closure")
    from_account_id: str | None = Field(None, foreign_key="accounts.id", description="Source account.")
    to_account_id: str | None = Field(None, foreign_key="accounts.id", description="Destination account.")
    amount: float = Field(description="Amount moved.")
    fee: float = Field(0.0, description="Fee charged to the source.")
    currency: str = Field(description="Currency of the amount.")
    status: str = Field("completed", description="completed | reversed")
    memo: str = Field("", description="Free text.")
    created_at: dt.datetime = Field(description="When it happened.")


def _valid_amount(amount: float) -> bool:
    return amount > 0 and round(amount, 2) == amount


class BankEnv(Env):
    """Teller and back office of a retail bank."""

    tables = (Customer, Account, Transfer)

    def _spendable(self, account: Account) -> float:
        floor = -account.overdraft_limit if account.type == "checking" else 0.0
        return round(account.balance - floor, 2)

    def _record(self, kind: str, amount: float, currency: str, source: str | None = None,
                target: str | None = None, fee: float = 0.0, memo: str = "") -> Transfer:
        transfer = Transfer(id=self.new_id("tx"), kind=kind, from_account_id=source, to_account_id=target,
                            amount=amount, fee=fee, currency=currency, memo=memo, created_at=self.now())
        self.add(transfer)
        return transfer

    # --- reads --------------------------------------------------------------------------
    @tool(kind="read")
    def get_account(self, account_id: str) -> dict:
        """Show an account: balance, limits, status.

        Args:
            account_id: The account, such as 'A001'.
        """
        account = self.get(Account, account_id)
        if account is None:
            return fail(f"Account {account_id} not found")
        return ok(data=account)

    @tool(kind="read")
    def list_customer_accounts(self, customer_id: str) -> dict:
        """List a customer's accounts that are not closed.

        Args:
            customer_id: The customer, such as 'C001'.
        """
        if self.get(Customer, customer_id) is None:
            return fail(f"Customer {customer_id} not found")
        accounts = self.select(Account, Account.customer_id == customer_id, Account.status != "closed")
        return ok(data=[{"id": a.id, "type": a.type, "currency": a.currency, "balance": a.balance,
                         "status": a.status} for a in accounts])

    @tool(kind="read")
    def get_statement(self, account_id: str, limit: int = 10) -> dict:
        """List an account's most recent money movements, newest first.

        Args:
            account_id: The account, such as 'A001'.
            limit: How many movements, 1 to 50, such as 10.
        """
        if self.get(Account, account_id) is None:
            return fail(f"Account {account_id} not found")
        if limit < 1 or limit > 50:
            return fail(f"limit must be between 1 and 50, got {limit}")
        moves = self.select(Transfer, (Transfer.from_account_id == account_id) | (Transfer.to_account_id == account_id),
                            order_by=[col(Transfer.created_at).desc(), col(Transfer.id).desc()])
        return ok(data=moves[:limit])

    # --- writes -------------------------------------------------------------------------
    @tool(kind="write")
    def open_account(self, customer_id: str, account_type: str, currency: str) -> dict:
        """Open a new, empty account for a verified customer (at most 3 open accounts each).

        Args:
            customer_id: The owner, such as 'C001'.
            account_type: 'checking' or 'savings'.
            currency: 'EUR', 'USD' or 'GBP'.
        """
        customer = self.get(Customer, customer_id)
        if customer is None:
            return fail(f"Customer {customer_id} not found")
        if customer.status != "active":
            return fail(f"Customer {customer_id} is {customer.status}")
        if not customer.kyc_verified:
            return fail(f"Customer {customer_id} has not passed identity verification")
        if account_type not in ACCOUNT_TYPES:
            return fail(f"Unknown account type {account_type}; use checking or savings")
        if currency not in CURRENCIES:
            return fail(f"Unsupported currency {currency}")
        if len(self.select(Account, Account.customer_id == customer_id, Account.status != "closed")) >= MAX_OPEN_ACCOUNTS:
            return fail(f"Customer {customer_id} already has {MAX_OPEN_ACCOUNTS} open accounts")
        account = Account(id=self.new_id("acct"), customer_id=customer_id, type=account_type, currency=currency,
                          opened_at=self.now())
        self.add(account)
        return ok(data={"account_id": account.id}, message=f"Opened {account_type} account in {currency}")

    @tool(kind="write")
    def deposit(self, account_id: str, amount: float) -> dict:
        """Pay cash into an account (frozen accounts still accept deposits).

        Args:
            account_id: The account, such as 'A001'.
            amount: Positive amount with at most two decimals, such as 250.0.
        """
        account = self.get(Account, account_id)
        if account is None:
            return fail(f"Account {account_id} not found")
        if account.status == "closed":
            return fail(f"Account {account_id} is closed")
        if not _valid_amount(amount):
            return fail(f"Invalid amount {amount}")
        account.balance = round(account.balance + amount, 2)
        account.last_activity_at = self.now()
        transfer = self._record("deposit", amount, account.currency, target=account_id)
        return ok(data={"transfer_id": transfer.id, "balance": account.balance})

    @tool(kind="write")
    def withdraw(self, account_id: str, amount: float) -> dict:
        """Pay cash out of an account, within its balance (or overdraft) and daily limit.

        Args:
            account_id: The account, such as 'A001'.
            amount: Positive amount with at most two decimals, such as 40.0.
        """
        account = self.get(Account, account_id)
        if account is None:
            return fail(f"Account {account_id} not found")
        if account.status != "open":
            return fail(f"Account {account_id} is {account.status}")
        if not _valid_amount(amount):
            return fail(f"Invalid amount {amount}")
        if amount > self._spendable(account):
            return fail(f"Insufficient funds in {account_id}")
        if account.withdrawn_today + amount > account.daily_limit:
            return fail(f"Daily limit of {account.daily_limit:.2f} {account.currency} exceeded")
        account.balance = round(account.balance - amount, 2)
        account.withdrawn_today = round(account.withdrawn_today + amount, 2)
        account.last_activity_at = self.now()
        transfer = self._record("withdrawal", amount, account.currency, source=account_id)
        return ok(data={"transfer_id": transfer.id, "balance": account.balance})

    @tool(kind="write")
    def transfer(self, from_account_id: str, to_account_id: str, amount: float, memo: str = "") -> dict:
        """Move money between two accounts of the same currency; 1.00 fee if the owners differ.

        Args:
            from_account_id: Source account, such as 'A001'.
            to_account_id: Destination account, such as 'A003'.
            amount: Positive amount with at most two decimals, such as 100.0.
            memo: Note for the statement, such as 'rent'.
        """
        source = self.get(Account, from_account_id)
        if source is None:
            return fail(f"Account {from_account_id} not found")
        target = self.get(Account, to_account_id)
        if target is None:
            return fail(f"Account {to_account_id} not found")
        if from_account_id == to_account_id:
            return fail("Source and destination must differ")
        if source.status != "open":
            return fail(f"Account {from_account_id} is {source.status}")
        if target.status == "closed":
            return fail(f"Account {to_account_id} is closed")
        if source.currency != target.currency:
            return fail(f"Currency mismatch: {source.currency} to {target.currency}")
        if not _valid_amount(amount):
            return fail(f"Invalid amount {amount}")
        fee = 0.0 if source.customer_id == target.customer_id else EXTERNAL_FEE
        if amount + fee > self._spendable(source):
            return fail(f"Insufficient funds in {from_account_id}")
        if source.withdrawn_today + amount > source.daily_limit:
            return fail(f"Daily limit of {source.daily_limit:.2f} {source.currency} exceeded")
        now = self.now()
        source.balance = round(source.balance - amount - fee, 2)
        source.withdrawn_today = round(source.withdrawn_today + amount, 2)
        source.last_activity_at = now
        target.balance = round(target.balance + amount, 2)
        target.last_activity_at = now
        record = self._record("transfer", amount, source.currency, from_account_id, to_account_id, fee, memo)
        return ok(data={"transfer_id": record.id, "fee": fee, "balance": source.balance})

    @tool(kind="write")
    def reverse_transfer(self, transfer_id: str) -> dict:
        """Undo a transfer made in the last 24 hours, if the recipient still holds the money; the fee is refunded.

        Args:
            transfer_id: The transfer, such as 'tx-3'.
        """
        record = self.get(Transfer, transfer_id)
        if record is None:
            return fail(f"Transfer {transfer_id} not found")
        if record.kind != "transfer":
            return fail(f"Only transfers can be reversed, {transfer_id} is a {record.kind}")
        if record.status == "reversed":
            return fail(f"Transfer {transfer_id} is already reversed")
        if self.now() - record.created_at > REVERSAL_WINDOW:
            return fail(f"Transfer {transfer_id} is older than 24 hours")
        source = self.get(Account, record.from_account_id)
        target = self.get(Account, record.to_account_id)
        if target.status != "open" or target.balance < record.amount:
            return fail(f"Account {target.id} can no longer return {record.amount:.2f}")
        if source.status == "closed":
            return fail(f"Account {source.id} is closed")
        target.balance = round(target.balance - record.amount, 2)
        source.balance = round(source.balance + record.amount + record.fee, 2)
        source.withdrawn_today = round(max(source.withdrawn_today - record.amount, 0.0), 2)
        record.status = "reversed"
        return ok(message=f"Transfer {transfer_id} reversed")

    @tool(kind="write")
    def freeze_account(self, account_id: str, reason: str) -> dict:
        """Freeze an account: no money may leave it until unfrozen.

        Args:
            account_id: The account, such as 'A002'.
            reason: Why, such as 'card reported stolen'.
        """
        account = self.get(Account, account_id)
        if account is None:
            return fail(f"Account {account_id} not found")
        if account.status != "open":
            return fail(f"Account {account_id} is {account.status}")
        if not reason.strip():
            return fail("A reason is required")
        account.status = "frozen"
        account.freeze_reason = reason.strip()
        return ok(message=f"Account {account_id} frozen")

    @tool(kind="write")
    def unfreeze_account(self, account_id: str) -> dict:
        """Lift a freeze.

        Args:
            account_id: The account, such as 'A002'.
        """
        account = self.get(Account, account_id)
        if account is None:
            return fail(f"Account {account_id} not found")
        if account.status != "frozen":
            return fail(f"Account {account_id} is not frozen")
        account.status = "open"
        account.freeze_reason = None
        return ok(message=f"Account {account_id} unfrozen")

    @tool(kind="write")
    def close_account(self, account_id: str, payout_account_id: str) -> dict:
        """Close an account, paying its balance out to another open account of the same owner and currency.

        Args:
            account_id: The account to close, such as 'A002'.
            payout_account_id: Where the remaining balance goes, such as 'A001'.
        """
        account = self.get(Account, account_id)
        if account is None:
            return fail(f"Account {account_id} not found")
        if account.status == "closed":
            return fail(f"Account {account_id} is already closed")
        if account.status == "frozen":
            return fail(f"Account {account_id} is frozen")
        if account.balance < 0:
            return fail(f"Account {account_id} is overdrawn by {-account.balance:.2f}")
        payout = self.get(Account, payout_account_id)
        if payout is None:
            return fail(f"Account {payout_account_id} not found")
        if payout.id == account.id or payout.status != "open":
            return fail(f"Account {payout_account_id} cannot receive the payout")
        if payout.customer_id != account.customer_id or payout.currency != account.currency:
            return fail("The payout account must belong to the same customer and currency")
        now = self.now()
        paid_out = account.balance
        if paid_out > 0:
            payout.balance = round(payout.balance + paid_out, 2)
            payout.last_activity_at = now
            self._record("closure", paid_out, account.currency, account_id, payout_account_id, memo="account closure")
        account.balance = 0.0
        account.status = "closed"
        account.closed_at = now
        account.last_activity_at = now
        account.daily_limit = 0.0
        return ok(data={"paid_out": paid_out}, message=f"Account {account_id} closed")
